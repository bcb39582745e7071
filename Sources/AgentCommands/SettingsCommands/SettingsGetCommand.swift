import AgentBase
import JSONSchema

/// `settings_get`: the settings file as it is, its parsed document and its hash.
package enum SettingsGetCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost

    /// The file as it is, its document and its hash.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var path: String
        /// Send it back as `if_match` with a change.
        package var hash: String
        package var text: String
        /// The parsed document; null when the file is not JSON (see `parseError`).
        package var settings: JSONValue
        package var parseError: String?

        package init(path: String, hash: String, text: String, settings: JSONValue, parseError: String? = nil) {
            self.path = path
            self.hash = hash
            self.text = text
            self.settings = settings
            self.parseError = parseError
        }

        enum CodingKeys: String, CodingKey {
            case ok, path, hash, text, settings
            case parseError = "parse_error"
        }
    }

    package static let name = "settings_get"
    package static let summary = "The settings file as it is (${env:NAME} references as written, never their values), its parsed document and its hash (send it back as if_match)."
    package static let routes: [CommandRoute] = [.get("/api/settings")]
    package static let mutating = false
    /// The file holds the users' password hashes: not for the read role.
    package static let requiresAdmin = true
    package static let adminReason = "it shows the settings file, which holds the users' password hashes"
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "path": ["type": "string"], "hash": ["type": "string"], "text": ["type": "string"],
        "settings": ["description": "The parsed document; null when the file is not JSON (see parse_error)."],
        "parse_error": ["type": "string"],
    ], required: ["ok", "path", "hash", "text", "settings"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(path: "/etc/agent/agent.json", hash: "9f2c", text: "{}\n", settings: [:])),
         ([:], Answer(path: "/etc/agent/agent.json", hash: "9f2d", text: "{", settings: .null, parseError: "not valid JSON at line 1, column 2: unexpected end"))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    package static func run(_ request: NoFields, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.settingsGet(respond: respond)
    }
}
