import AgentBase
import AgentLoop
import JSONSchema

/// `task_complete`: a run that waits for a person succeeds, with its output.
package enum TaskCompleteCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        /// The run's id.
        package var id: String
        /// Checked against the task's output schema; default `{}`.
        package var output: JSONValue?

        package init(id: String, output: JSONValue? = nil) {
            self.id = id
            self.output = output
        }
    }

    package static let name = "task_complete"
    package static let summary = "Completes a run that waits for a person, with its output (checked against the task's output schema). Over HTTP only that person may."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/complete")]
    package static let mutating = true
    /// A person's action: any role may send it, the run checks that it waits for that user.
    package static let requiresAdmin = false
    package static let requestSchema: JSONValue = CommandSchema.object(
        ["id": TaskCommands.runID, "output": ["description": "The run's output (JSON; default {}; at most 1 MiB as JSON text)."]], required: ["id"])
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1"], TaskRunAnswer(json: TaskCommands.exampleRun)), (["id": "r1", "output": ["approved": true]], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.personFinished(request.id, .completed(request.output ?? .object([:])), caller: caller, respond: respond)
    }
}

extension TaskCompleteCommand.Request: SelfCheckingRequest {
    /// An output over ``InputSize/largest``, as a command's output is cut at (off the loop:
    /// see ``SelfCheckingRequest``).
    package func problem() -> CommandError? { InputSize.problem(output, what: "output", pointer: "/output") }
}
