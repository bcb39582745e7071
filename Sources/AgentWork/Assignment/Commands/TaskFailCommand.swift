import AgentBase
import AgentLoop
import JSONSchema

/// `task_fail`: a run that waits for a person fails, saying why.
package enum TaskFailCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        /// The run's id.
        package var id: String
        /// Why it failed.
        package var error: String

        package init(id: String, error: String) {
            self.id = id
            self.error = error
        }
    }

    package static let name = "task_fail"
    package static let summary = "Fails a run that waits for a person, saying why (retried if its task's policy allows). Over HTTP only that person may."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/fail")]
    package static let mutating = true
    /// A person's action: any role may send it, the run checks that it waits for that user.
    package static let requiresAdmin = false
    package static let requestSchema: JSONValue = CommandSchema.object(
        ["id": TaskCommands.runID, "error": ["type": "string", "minLength": 1, "maxLength": 65536, "description": "Why it failed (at most 65,536 characters)."]], required: ["id", "error"])
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1", "error": "not today"], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.personFinished(request.id, .failed(request.error), caller: caller, respond: respond)
    }
}
