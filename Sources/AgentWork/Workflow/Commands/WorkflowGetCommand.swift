import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_get`: a workflow's definition as the settings file has it.
package enum WorkflowGetCommand: @preconcurrency AgentCommand {
    package typealias Request = NameRequest

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var name: String
        package var definition: JSONValue
        /// The settings file's hash (send it back as `if_match`).
        package var hash: String
        /// The hash of the definition new runs use (nil while it is not loaded: invalid).
        package var version: String?

        package init(name: String, definition: JSONValue, hash: String, version: String?) {
            self.name = name
            self.definition = definition
            self.hash = hash
            self.version = version
        }
    }

    package static let name = "workflow_get"
    package static let summary = "A workflow's definition as the settings file has it (${env:NAME} references as written), the version new runs use, and the file's hash (send it back as if_match)."
    package static let routes: [CommandRoute] = [.get("/api/workflows/{name}")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object(["name": WorkflowDefinitionCommands.name], required: ["name"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "name": ["type": "string"], "definition": ["type": "object"], "hash": ["type": "string"],
        "version": ["type": "string", "description": "The hash of the definition new runs use (absent while the definition is not loaded: invalid)."],
    ], required: ["ok", "name", "definition", "hash"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "support"], Answer(name: "support", definition: ["steps": [["id": "classify", "task": "classify"]]], hash: "9c1e", version: "3f2a"))]
    }
    package static var unavailable: CommandError { WorkflowDefinitionCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: any WorkflowDefinitionHost, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.workflowDefinition(named: request.name, respond: respond)
    }
}
