import AgentBase
import AgentLoop

/// `task_unassign`: a run assigned by hand goes back to the strategy.
package enum TaskUnassignCommand: @preconcurrency TaskRunReferenceCommand {
    package static let name = "task_unassign"
    package static let summary = "Undoes a manual assignment: the run goes back to the strategy."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/unassign")]
    package static let mutating = true

    @LoopActor package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        respond(host.unassign(request.id))
    }
}
