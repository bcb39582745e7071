import AgentBase
import AgentLoop

/// `task_cancel`: cancels a queued, retrying or running run.
package enum TaskCancelCommand: @preconcurrency TaskRunReferenceCommand {
    package static let name = "task_cancel"
    package static let summary = "Cancels a queued, retrying or running run (a running one's whole process tree is killed)."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/cancel")]
    package static let mutating = true

    @LoopActor package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.cancelRun(request.id, respond: respond)
    }
}
