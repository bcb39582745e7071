import JSONSchema

/// The settings change a definition command stands for: one change of `settings_change`,
/// which the root makes (``WorkflowDefinitionHost``).
package struct WorkflowSettingsChange: Sendable, Equatable {
    package enum Action: String, Sendable {
        case add = "add_workflow", set = "set_workflow", remove = "remove_workflow", addStep = "add_workflow_step"
    }

    package var action: Action
    /// The workflow's name.
    package var name: String
    /// `add`, `set`: the definition.
    package var settings: JSONObject?
    /// `addStep`: the step, and its index once inserted (nil: last).
    package var step: JSONObject?
    package var position: Int?
    /// The settings file's hash the client read: refused if the file changed since.
    package var ifMatch: String?

    package init(_ action: Action, name: String, settings: JSONObject? = nil, step: JSONObject? = nil, position: Int? = nil, ifMatch: String? = nil) {
        self.action = action
        self.name = name
        self.settings = settings
        self.step = step
        self.position = position
        self.ifMatch = ifMatch
    }
}
