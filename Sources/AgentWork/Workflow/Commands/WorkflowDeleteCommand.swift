import AgentBase
import JSONSchema

/// `workflow_delete`: removes a workflow's definition from the settings.
package enum WorkflowDeleteCommand: @preconcurrency WorkflowChangeCommand {
    package typealias Request = DeletionRequest

    package static let name = "workflow_delete"
    package static let summary = "Removes a workflow's definition from the settings (refused, nothing written, while a schedule or anything else still names it); runs going finish on their copy."
    package static let routes: [CommandRoute] = [.delete("/api/workflows/{name}")]
    package static let requestSchema: JSONValue = CommandSchema.object(
        ["name": WorkflowDefinitionCommands.name, "if_match": WorkflowDefinitionCommands.ifMatch], required: ["name"])
    package static var examples: [(request: JSONValue, answer: WorkflowChangeAnswer)] {
        [(["name": "support"], WorkflowDefinitionCommands.exampleChange)]
    }

    package static func settingsChange(_ request: Request) -> WorkflowSettingsChange {
        WorkflowSettingsChange(.remove, name: request.name, ifMatch: request.ifMatch)
    }
}
