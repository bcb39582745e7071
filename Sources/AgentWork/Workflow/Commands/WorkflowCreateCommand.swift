import AgentBase
import JSONSchema

/// `workflow_create`: adds a workflow definition to the settings.
package enum WorkflowCreateCommand: @preconcurrency WorkflowChangeCommand {
    package typealias Request = WorkflowDefinitionRequest

    package static let name = "workflow_create"
    package static let summary = "Adds a workflow definition to the settings (refused if the name is taken): validated with every error at its JSON pointer (nothing written when invalid), written keeping the file's formatting, reloaded."
    package static let routes: [CommandRoute] = [.post("/api/workflows")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": WorkflowDefinitionCommands.name,
        "definition": ["type": "object", "description": "The workflow's definition: {\"input\"?, \"on_event\"?, \"steps\": [...]}."],
        "if_match": WorkflowDefinitionCommands.ifMatch,
    ], required: ["name", "definition"])
    package static var examples: [(request: JSONValue, answer: WorkflowChangeAnswer)] {
        [(["name": "support", "definition": ["steps": [["id": "classify", "task": "classify"]]], "if_match": "9c1e"], WorkflowDefinitionCommands.exampleChange)]
    }

    package static func settingsChange(_ request: WorkflowDefinitionRequest) -> WorkflowSettingsChange {
        WorkflowSettingsChange(.add, name: request.name, settings: request.definition, ifMatch: request.ifMatch)
    }
}
