import AgentBase

/// The request of `workflow_create` and `workflow_update`: a workflow's whole definition
/// (`{"input"?, "on_event"?, "steps": [...]}`, checked as the settings are).
package typealias WorkflowDefinitionRequest = DefinitionRequest
