import AgentBase
import AgentLoop
import JSONSchema

/// `task_assign`: a queued or retrying run waits for one executor's room, whatever the strategy.
package enum TaskAssignCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        /// The run's id.
        package var id: String
        /// The executor's name.
        package var to: String

        package init(id: String, to: String) {
            self.id = id
            self.to = to
        }
    }

    package static let name = "task_assign"
    package static let summary = "Assigns a queued or retrying run to an executor by hand: it waits for that executor's room, whatever the strategy."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/assign")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object(["id": TaskCommands.runID, "to": AssignmentCommands.executorName], required: ["id", "to"])
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1", "to": "gpu#1"], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        respond(host.assign(request.id, to: request.to))
    }
}
