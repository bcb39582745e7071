import AgentBase
import JSONSchema

/// A user's chat preferences: language, units, verbosity and a free object (`custom`) that the
/// chatbot's `preferences_schema` validates. Kept in the store; passed to every adapter with
/// each message as `context.preferences`.
package struct ChatPreferences: Codable, Sendable, Equatable {
    /// A language tag (BCP 47: `en`, `fr-CA`).
    package var language: String?
    /// `metric` or `imperial`.
    package var units: String?
    /// `brief`, `normal` or `detailed`.
    package var verbosity: String?
    package var custom: JSONObject?

    package init(language: String? = nil, units: String? = nil, verbosity: String? = nil, custom: JSONObject? = nil) {
        self.language = language
        self.units = units
        self.verbosity = verbosity
        self.custom = custom
    }

    /// The stored JSON text (nil or unreadable: none set).
    package init(stored: String?) {
        self = stored.flatMap { try? JSONValueDecoder().decode(ChatPreferences.self, from: JSONValue.parse($0)) } ?? ChatPreferences()
    }

    /// These preferences changed by a request: each member given replaces the one kept; the
    /// members of `custom` are set one by one (`null` removes one).
    package func changed(by request: ChatPreferencesSetCommand.Request) -> ChatPreferences {
        var changed = self
        if let language = request.language { changed.language = language }
        if let units = request.units { changed.units = units }
        if let verbosity = request.verbosity { changed.verbosity = verbosity }
        if let members = request.custom {
            var custom = changed.custom ?? [:]
            for (key, value) in members { custom[key] = value == .null ? nil : value }
            changed.custom = custom
        }
        return changed
    }

    /// As JSON, for the store and the adapters' context.
    package var json: JSONValue {
        var object: JSONObject = [:]
        object["language"] = language.map(JSONValue.string)
        object["units"] = units.map(JSONValue.string)
        object["verbosity"] = verbosity.map(JSONValue.string)
        object["custom"] = .object(custom ?? [:])
        return .object(object)
    }

    /// Why `custom` does not pass the chatbot's `preferences_schema`, at each member's pointer.
    package func refusal(schema validator: JSONSchemaValidator, settingsPointer: String) -> CommandError? {
        let problems = validator.validate(.object(custom ?? [:]))
        guard let first = problems.first else { return nil }
        let shown = problems.prefix(10)
        let list = shown.map { "/custom\($0.instanceLocation): \($0.message)" }.joined(separator: "; ")
        return CommandError(.invalid, "the preferences do not match the chatbot's preferences_schema (\(settingsPointer) in the settings): \(list)",
                            pointer: "/custom" + first.instanceLocation,
                            errors: shown.map { ["pointer": .string("/custom" + $0.instanceLocation), "message": .string($0.message)] })
    }

    /// The schema of the preferences as requests and answers carry them.
    package static let schemaMembers: JSONObject = [
        "language": ["type": "string", "pattern": "^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$", "description": "A language tag (BCP 47), e.g. en, fr-CA."],
        "units": ["type": "string", "enum": ["metric", "imperial"]],
        "verbosity": ["type": "string", "enum": ["brief", "normal", "detailed"]],
        "custom": ["type": "object", "description": "Free members, validated by the chatbot's preferences_schema when it has one; in a change, a member set to null is removed."],
    ]
}
