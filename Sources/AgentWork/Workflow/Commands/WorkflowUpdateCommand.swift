import AgentBase
import JSONSchema

/// `workflow_update`: replaces a workflow's definition.
package enum WorkflowUpdateCommand: @preconcurrency WorkflowChangeCommand {
    package typealias Request = WorkflowDefinitionRequest

    package static let name = "workflow_update"
    package static let summary = "Replaces a workflow's definition (validated, written, reloaded); runs going keep the definition they started with."
    package static let routes: [CommandRoute] = [CommandRoute("PUT", "/api/workflows/{name}")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": WorkflowDefinitionCommands.name,
        "definition": ["type": "object", "description": "The workflow's whole new definition."],
        "if_match": WorkflowDefinitionCommands.ifMatch,
    ], required: ["name", "definition"])
    package static var examples: [(request: JSONValue, answer: WorkflowChangeAnswer)] {
        [(["name": "support", "definition": ["steps": [["id": "notify", "publish": ["type": "ticket.closed"]]]]], WorkflowDefinitionCommands.exampleChange)]
    }

    package static func settingsChange(_ request: WorkflowDefinitionRequest) -> WorkflowSettingsChange {
        WorkflowSettingsChange(.set, name: request.name, settings: request.definition, ifMatch: request.ifMatch)
    }
}
