import AgentBase
import JSONSchema

/// `workflow_add_step`: inserts a step into a workflow's top-level steps.
package enum WorkflowAddStepCommand: @preconcurrency WorkflowChangeCommand {
    package struct Request: Codable, Sendable {
        package var name: String
        /// `{"id", and its kind's key}`.
        package var step: JSONObject
        /// The step's index once inserted (0 first); nil: after the last.
        package var position: Int?
        package var ifMatch: String?

        enum CodingKeys: String, CodingKey {
            case name, step, position, ifMatch = "if_match"
        }

        package init(name: String, step: JSONObject, position: Int? = nil, ifMatch: String? = nil) {
            self.name = name
            self.step = step
            self.position = position
            self.ifMatch = ifMatch
        }
    }

    package static let name = "workflow_add_step"
    package static let summary = "Inserts a step into a workflow's top-level steps at a position (0 first; absent: last), validated, written keeping the file's formatting, reloaded."
    package static let routes: [CommandRoute] = [.post("/api/workflows/{name}/steps")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": WorkflowDefinitionCommands.name,
        "step": ["type": "object", "description": "The step: {\"id\", and its kind's key}, e.g. {\"id\": \"notify\", \"publish\": {\"type\": \"ticket.closed\"}}."],
        "position": ["type": "integer", "minimum": 0, "description": "The step's index once inserted (0 first); absent: after the last."],
        "if_match": WorkflowDefinitionCommands.ifMatch,
    ], required: ["name", "step"])
    package static var examples: [(request: JSONValue, answer: WorkflowChangeAnswer)] {
        [(["name": "support", "step": ["id": "notify", "publish": ["type": "ticket.closed"]], "position": 1], WorkflowDefinitionCommands.exampleChange)]
    }

    package static func settingsChange(_ request: Request) -> WorkflowSettingsChange {
        WorkflowSettingsChange(.addStep, name: request.name, step: request.step, position: request.position, ifMatch: request.ifMatch)
    }
}
