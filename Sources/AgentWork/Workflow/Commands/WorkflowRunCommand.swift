import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_run`: starts a run of a workflow; with `wait`, answers when it ends, with its step log.
package enum WorkflowRunCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var name: String
        /// Checked against the workflow's input schema; default `{}`.
        package private(set) var input: JSONValue?
        package var wait: Bool?
        /// What ``input``'s nesting check found, made where the request is decoded (off the
        /// loop: a MiB of values walked there held it tens of ms).
        package private(set) var nestingProblem: (pointer: String, message: String)?
        /// ``input``'s bytes as JSON text (`{}` when none), measured where the request is decoded:
        /// what it counts against the unfinished runs' bound.
        package private(set) var inputBytes = 2

        enum CodingKeys: String, CodingKey {
            case name, input, wait
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            self.init(name: try container.decode(String.self, forKey: .name), input: try container.decodeIfPresent(JSONValue.self, forKey: .input),
                      wait: try container.decodeIfPresent(Bool.self, forKey: .wait))
        }

        package init(name: String, input: JSONValue? = nil, wait: Bool? = nil) {
            self.name = name
            self.input = input
            self.wait = wait
            nestingProblem = input.flatMap { InputNesting.problem($0) }
            if let input { inputBytes = input.serializedLength(atMost: InputSize.largest) ?? InputSize.largest + 1 }
        }
    }

    package static let name = "workflow_run"
    package static let summary = "Starts a run of a workflow with an input valid against its input schema; with `wait`, answers when it has finished, with its step log."
    package static let routes: [CommandRoute] = [.post("/api/workflows/{name}/run")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": ["type": "string", "minLength": 1, "description": "The workflow's name in the settings."],
        "input": ["description": "The run's input (JSON; default {}; at most 1 MiB as JSON text), checked against the workflow's input schema."],
        "wait": ["type": "boolean", "default": false, "description": "Answer when the run has finished (succeeded, failed or cancelled)."],
    ], required: ["name"])
    package static var answerSchema: JSONValue { WorkflowCommands.showAnswer }
    package static var examples: [(request: JSONValue, answer: WorkflowShowAnswer)] {
        [(["name": "support"], WorkflowShowAnswer(json: WorkflowCommands.exampleRun)),
         (["name": "support", "input": ["ticket": 7], "wait": true], WorkflowShowAnswer(json: WorkflowCommands.exampleRun, steps: [WorkflowCommands.exampleStep]))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        host.runWorkflow(request, requestedBy: caller.front == "control" ? "cli" : "http", respond: respond)
    }
}

extension WorkflowRunCommand.Request: SelfCheckingRequest {
    /// An input over ``InputSize/largest`` (off the loop: see ``SelfCheckingRequest``), as
    /// measured where the request was decoded.
    package func problem() -> CommandError? { inputBytes > InputSize.largest ? InputSize.problem(input) : nil }
}
