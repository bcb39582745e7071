import AgentBase
import JSONSchema

/// The configuration commands and the schemas they share.
package enum ConfigurationCommands {
    /// Every typed configuration command.
    package static let all: [any AgentCommand.Type] = [
        SettingsGetCommand.self, SettingsChangeCommand.self, ValidateCommand.self, ModulesCommand.self,
    ]

    static let names: JSONValue = ["type": "array", "items": ["type": "string"]]
    static let issue: JSONValue = CommandSchema.object([
        "file": ["type": "string"], "pointer": ["type": "string"], "message": ["type": "string"],
        "process": ["type": "string"], "follows_from": ["type": "string"],
    ], open: true)
}
