import AgentBase
import AgentLoop
import JSONSchema

/// A command that changes the workflow definitions in the settings file (`workflow_create`,
/// `workflow_update`, `workflow_delete`, `workflow_add_step`): each is the settings change it
/// stands for, made by the settings commands' one path, whichever front sends it.
package protocol WorkflowChangeCommand: AgentCommand
where Answer == WorkflowChangeAnswer, Host == any WorkflowDefinitionHost {
    /// The settings change `request` stands for.
    static func settingsChange(_ request: Request) -> WorkflowSettingsChange
}

extension WorkflowChangeCommand {
    package static var mutating: Bool { true }
    package static var answerSchema: JSONValue { WorkflowDefinitionCommands.changeAnswer }
    package static var unavailable: CommandError { WorkflowDefinitionCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: any WorkflowDefinitionHost, caller: CommandCaller,
                           respond: @escaping (Result<WorkflowChangeAnswer, CommandError>) -> Void) {
        let change = settingsChange(request)
        host.changeWorkflows(change) { result in respond(result.map { WorkflowChangeAnswer(change: $0, workflow: change.name) }) }
    }
}
