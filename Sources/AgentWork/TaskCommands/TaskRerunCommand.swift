import AgentBase
import AgentLoop

/// `task_rerun`: queues a new run of a run's task with the same input and priority.
package enum TaskRerunCommand: @preconcurrency TaskRunReferenceCommand {
    package static let name = "task_rerun"
    package static let summary = "Queues a new run of a run's task with the same input and priority."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/rerun")]
    package static let mutating = true

    @LoopActor package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.rerunRun(request.id, respond: respond)
    }
}
