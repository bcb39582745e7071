import AgentBase
import JSONSchema

/// What the configuration commands run on: the settings file the agent was started from, as
/// the root (AgentRuntime) reaches it. The commands are declared here, below the root, so that
/// every front finds them in the one registry.
package protocol SettingsCommandHost: AnyObject {
    func settingsGet(respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
    func settingsChange(_ request: SettingsChangeCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
    func validate(_ request: ValidateCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
    func modules(respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
}

/// The configuration commands and the schemas they share.
package enum SettingsCommandSchemas {
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
