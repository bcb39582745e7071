import AgentBase
import AgentLoop
import JSONSchema

/// `executor_drain` and `executor_resume`: the same request and answer; each sets whether
/// the executor takes new runs (kept in the store across restarts).
package protocol ExecutorDrainingCommand: AgentCommand
where Request == ExecutorReference, Answer == ExecutorAnswer, Host == TaskCoordinator {
    /// Drains (true) or resumes.
    static var drains: Bool { get }
}

extension ExecutorDrainingCommand {
    package static var mutating: Bool { true }
    package static var requestSchema: JSONValue { CommandSchema.object(["name": AssignmentCommands.executorName], required: ["name"]) }
    package static var answerSchema: JSONValue {
        CommandSchema.object(["ok": ["const": true], "executor": AssignmentCommands.executorSchema], required: ["ok", "executor"])
    }
    package static var examples: [(request: JSONValue, answer: ExecutorAnswer)] {
        [(["name": "gpu#1"], ExecutorAnswer(executor: AssignmentCommands.exampleExecutor))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: ExecutorReference, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<ExecutorAnswer, CommandError>) -> Void) {
        respond(host.setDraining(request.name, drains))
    }
}
