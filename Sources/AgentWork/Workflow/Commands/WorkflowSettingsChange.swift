import JSONSchema

/// The settings change a definition command stands for: the members of a `settings_change`
/// request (without its `command`).
package struct WorkflowSettingsChange: Encodable, Sendable, Equatable {
    package enum Action: String, Encodable, Sendable {
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

    enum CodingKeys: String, CodingKey {
        case action, name, settings, step, position, ifMatch = "if_match"
    }

    package init(_ action: Action, name: String, settings: JSONObject? = nil, step: JSONObject? = nil, position: Int? = nil, ifMatch: String? = nil) {
        self.action = action
        self.name = name
        self.settings = settings
        self.step = step
        self.position = position
        self.ifMatch = ifMatch
    }
}
