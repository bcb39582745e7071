import AgentBase
import AgentLoop

/// `task_show`: one run, its status, attempts, input, output, error and stderr's tail.
package enum TaskShowCommand: @preconcurrency TaskRunReferenceCommand {
    package static let name = "task_show"
    package static let summary = "One run: its status, attempts, input, output, error, exit status and the tail of its stderr."
    package static let routes: [CommandRoute] = [.get("/api/runs/{id}")]
    package static let mutating = false

    @LoopActor package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.showRun(request.id, respond: respond)
    }
}
