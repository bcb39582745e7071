import AgentBase
import AgentLoop
import JSONSchema

/// `task_rerun`: queues a new run of a run's task with the same input and priority; with
/// `wait`, answers when the new run ends (as `task_run` does).
package enum TaskRerunCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        /// The run to run again.
        package var id: String
        package var wait: Bool?

        package init(id: String, wait: Bool? = nil) {
            self.id = id
            self.wait = wait
        }
    }

    package static let name = "task_rerun"
    package static let summary = "Queues a new run of a run's task with the same input and priority; with `wait`, answers when the new run has finished."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/rerun")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "id": TaskCommands.runID,
        "wait": ["type": "boolean", "default": false, "description": "Answer when the new run has finished (succeeded, failed, timed_out, cancelled or abandoned)."],
    ], required: ["id"])
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1"], TaskRunAnswer(json: TaskCommands.exampleRun)), (["id": "r1", "wait": true], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.rerunRun(request.id, wait: request.wait ?? false, respond: respond)
    }
}
