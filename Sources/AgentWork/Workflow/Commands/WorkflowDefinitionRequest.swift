import JSONSchema

/// The request of `workflow_create` and `workflow_update`: a workflow's whole definition.
package struct WorkflowDefinitionRequest: Codable, Sendable {
    package var name: String
    /// `{"input"?, "on_event"?, "steps": [...]}`, checked as the settings are.
    package var definition: JSONObject
    package var ifMatch: String?

    enum CodingKeys: String, CodingKey {
        case name, definition, ifMatch = "if_match"
    }

    package init(name: String, definition: JSONObject, ifMatch: String? = nil) {
        self.name = name
        self.definition = definition
        self.ifMatch = ifMatch
    }
}
