import AgentBase
import JSONSchema

/// Where the workflow definitions are kept: the settings file the agent was started from
/// (the root's settings commands). The definition commands read it and change it through
/// here, each change as `settings_change` makes it (checked with every error at its pointer,
/// nothing written when invalid, written atomically keeping the file's formatting, applied by
/// reload: runs going keep the definition they started with).
package protocol WorkflowDefinitionHost: AnyObject {
    /// `workflow_get`: a definition as the file has it (`${env:NAME}` references as written).
    func workflowDefinition(named name: String, respond: @escaping (Result<WorkflowGetCommand.Answer, CommandError>) -> Void)
    /// Makes `change` and answers what `settings_change` answers (`changed`, `path`, `hash`…).
    func changeWorkflows(_ change: WorkflowSettingsChange, respond: @escaping (Result<JSONObject, CommandError>) -> Void)
}
