import AgentBase
import JSONSchema

/// The configuration commands and the schemas they share.
package enum ConfigurationCommands {
    /// Every typed configuration command.
    package static let all: [any AgentCommand.Type] = [
        SettingsGetCommand.self, SettingsChangeCommand.self, ValidateCommand.self, ModulesCommand.self,
    ]

    static let names: JSONValue = ["type": "array", "items": ["type": "string"]]

    /// A problem of a settings document, at its pointer.
    package struct Issue: Encodable, Sendable, Equatable {
        package var file: String?
        package var pointer: String?
        package var message: String
        /// The process it is about.
        package var process: String?
        /// The problem it follows from (a module that failed to load).
        package var followsFrom: String?

        package init(file: String? = nil, pointer: String? = nil, message: String, process: String? = nil, followsFrom: String? = nil) {
            self.file = file
            self.pointer = pointer
            self.message = message
            self.process = process
            self.followsFrom = followsFrom
        }

        enum CodingKeys: String, CodingKey {
            case file, pointer, message, process
            case followsFrom = "follows_from"
        }
    }

    /// Why a module could not be loaded or described.
    package struct ModuleError: Encodable, Sendable, Equatable {
        package var code: String
        package var message: String

        package init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }
    static let issue: JSONValue = CommandSchema.object([
        "file": ["type": "string"], "pointer": ["type": "string"], "message": ["type": "string"],
        "process": ["type": "string"], "follows_from": ["type": "string"],
    ], open: true)
}
