import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_signal`: sends a signal to one workflow run (never broadcast). A `wait_signal`
/// step of its name waiting in the run takes it; otherwise the run keeps it (committed) for the
/// first such step it reaches.
package enum WorkflowSignalCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var id: String
        package var name: String
        /// What the step's output carries (`${steps:ID/payload}`); default `{}`.
        package var payload: JSONValue?

        package init(id: String, name: String, payload: JSONValue? = nil) {
            self.id = id
            self.name = name
            self.payload = payload
        }
    }

    package struct Answer: Encodable, Sendable {
        package var ok = true
        package var run: String
        package var name: String
        /// The `wait_signal` step it released, if one waited.
        package var step: String?
        /// Kept by the run for a later `wait_signal` step (none waited).
        package var kept: Bool
    }

    package static let name = "workflow_signal"
    package static let summary = "Sends a signal to one workflow run: a waiting `wait_signal` step of its name goes on with its payload; if none waits, the run keeps it for the first that starts."
    package static let routes: [CommandRoute] = [.post("/api/workflow-runs/{id}/signals/{name}")]
    package static let mutating = true
    package static let grant: String? = "signal"
    package static let requestSchema: JSONValue = CommandSchema.object([
        "id": WorkflowCommands.runID,
        "name": ["type": "string", "minLength": 1, "maxLength": 200, "description": "The signal's name, as the run's `wait_signal` step names it (letters, digits, `_`, `-`, `.`)."],
        "payload": ["description": "Any JSON (default {}): the step's output has it as `payload`, as an event's."],
    ], required: ["id", "name"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "run": ["type": "string"], "name": ["type": "string"],
        "step": ["type": "string", "description": "The wait_signal step it released."],
        "kept": ["type": "boolean", "description": "true: no step waited for it; the run keeps it (committed) for the first wait_signal of its name."],
    ], required: ["ok", "run", "name", "kept"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["id": "w1", "name": "customer.replied", "payload": ["text": "yes"]], Answer(run: "w1", name: "customer.replied", step: "reply", kept: false)),
         (["id": "w1", "name": "customer.replied"], Answer(run: "w1", name: "customer.replied", kept: true))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: WorkflowEngine, caller: CommandCaller,
                                       respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.signal(request, by: caller.description, respond: respond)
    }
}
