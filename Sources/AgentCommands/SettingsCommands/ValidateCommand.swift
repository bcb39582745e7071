import AgentBase
import JSONSchema

/// `validate`: the report of validate-settings --json, for the file or a given document.
package enum ValidateCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost
    package struct Request: Codable, Sendable, Equatable {
        /// The document as text.
        package var text: String?
        /// The document.
        package var settings: JSONObject?

        package init(text: String? = nil, settings: JSONObject? = nil) {
            self.text = text
            self.settings = settings
        }
    }

    package static let name = "validate"
    package static let summary = "The report of validate-settings --json for the settings file, or for a document given as text or as an object (nothing is written)."
    package static let routes: [CommandRoute] = [.post("/api/validate")]
    package static let mutating = false
    /// A document may enable any library the agent's user owns, and describing it runs that
    /// library's code: not for the read role.
    package static let requiresAdmin = true
    package static let adminReason = "it loads the modules a document names, which runs their code"
    package static let requestSchema: JSONValue = CommandSchema.object([
        "text": ["type": "string", "description": "The document as text (as a settings editor has it)."],
        "settings": ["type": "object", "description": "The document."],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "file": ["type": "string"], "valid": ["type": "boolean"],
        "errors": ["type": "array", "items": ConfigurationCommands.issue], "modules": ["type": "array", "items": ["type": "object"]],
        "processes": ["type": "array", "items": ["type": "object"]],
    ], required: ["ok", "valid", "errors"])
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "file": "agent.json", "valid": true, "errors": []])),
         (["text": "{}"], EncodedAnswer(["ok": true, "file": "agent.json", "valid": false, "errors": [["pointer": "", "message": "no processes"]]])),
         (["settings": ["enabled_modules": []]], EncodedAnswer(["ok": true, "valid": true, "errors": []]))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.validate(request, respond: respond)
    }
}
