import JSONSchema

/// The request of a command that creates or replaces something the settings define by name
/// (`workflow_create`, `task_update`, …): the name, its whole definition and the settings
/// file's hash the client read.
package struct DefinitionRequest: Codable, Sendable, Equatable {
    package var name: String
    /// The definition, checked as the settings are.
    package var definition: JSONObject
    /// The settings file's hash the client read: refused if the file changed since.
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

/// The request of a command that removes something the settings define by name
/// (`workflow_delete`, `task_delete`, …).
package struct DeletionRequest: Codable, Sendable, Equatable {
    package var name: String
    /// The settings file's hash the client read: refused if the file changed since.
    package var ifMatch: String?

    enum CodingKeys: String, CodingKey {
        case name, ifMatch = "if_match"
    }

    package init(name: String, ifMatch: String? = nil) {
        self.name = name
        self.ifMatch = ifMatch
    }
}

/// The request of a command that reads something the settings define by name
/// (`workflow_get`, `task_get`, …).
package struct NameRequest: Codable, Sendable, Equatable {
    package var name: String

    package init(name: String) { self.name = name }
}
