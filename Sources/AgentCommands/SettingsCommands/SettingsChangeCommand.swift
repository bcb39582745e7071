import AgentBase
import JSONSchema

/// `settings_change`: changes the settings: checked, written keeping the file's formatting, applied by reload.
package enum SettingsChangeCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost
    /// One change: which members an action needs is checked when it is applied
    /// (``SettingsChange`` in the root), with the member's pointer.
    package struct Change: Codable, Sendable, Equatable {
        package var action: SettingsChangeAction?
        package var name: String?
        package var settings: JSONObject?
        package var step: JSONObject?
        package var position: Int?
        package var text: String?

        package init(action: SettingsChangeAction? = nil, name: String? = nil, settings: JSONObject? = nil, step: JSONObject? = nil,
                     position: Int? = nil, text: String? = nil) {
            self.action = action
            self.name = name
            self.settings = settings
            self.step = step
            self.position = position
            self.text = text
        }
    }

    /// One change at the top level (its members beside `if_match`), or several in `changes`.
    package struct Request: Codable, Sendable, Equatable {
        /// The members of a change given at the top level (none when `changes` lists them).
        package var change: Change
        package var changes: [Change]?
        package var ifMatch: String?

        package init(_ change: Change, ifMatch: String? = nil) {
            self.change = change
            self.ifMatch = ifMatch
        }

        package init(changes: [Change], ifMatch: String? = nil) {
            change = Change()
            self.changes = changes
            self.ifMatch = ifMatch
        }

        enum CodingKeys: String, CodingKey {
            case changes
            case ifMatch = "if_match"
        }

        package init(from decoder: any Decoder) throws {
            change = try Change(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            changes = try container.decodeIfPresent([Change].self, forKey: .changes)
            ifMatch = try container.decodeIfPresent(String.self, forKey: .ifMatch)
        }

        package func encode(to encoder: any Encoder) throws {
            try change.encode(to: encoder)
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encodeIfPresent(changes, forKey: .changes)
            try container.encodeIfPresent(ifMatch, forKey: .ifMatch)
        }

        /// The top-level change (nil: the request lists `changes`).
        package var single: Change? { changes == nil ? change : nil }
    }

    package static let name = "settings_change"
    package static let summary = "Changes the settings: checked as validate-settings checks them (every error with its pointer, nothing written), written atomically keeping the file's formatting, applied by reload (the answer says what was kept, restarted, started, stopped). One change, or a list applied together."
    package static let routes: [CommandRoute] = [.post("/api/settings/changes")]
    package static let mutating = true
    package static let requestSchema: JSONValue = {
        var properties = changeFields
        properties["changes"] = ["type": "array", "minItems": 1, "items": CommandSchema.object(changeFields, required: ["action"]),
                                 "description": "Changes applied together, instead of one change at the top level."]
        properties["if_match"] = ["type": "string", "description": "The hash settings_get returned: refused (409) if the file changed since."]
        return ["type": "object", "properties": .object(properties), "additionalProperties": false,
                "description": "One change (action, name, settings, text) or a list of them (changes)."]
    }()
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "changed": ["type": "boolean"], "path": ["type": "string"], "hash": ["type": "string"],
        "message": ["type": "string"],
        "kept": ConfigurationCommands.names, "restarted": ConfigurationCommands.names, "started": ConfigurationCommands.names, "stopped": ConfigurationCommands.names, "notes": ["type": "array", "items": ["type": "string"]],
    ], required: ["ok", "changed", "hash"])
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        let done: JSONValue = ["ok": true, "changed": true, "path": "/etc/agent/agent.json", "hash": "9f2c", "kept": [], "restarted": [],
                               "started": ["station"], "stopped": []]
        return [(["action": "add_process", "name": "station", "settings": ["type": "weather_feed"]], EncodedAnswer(done)),
                (["changes": [["action": "disable_process", "name": "trades"], ["action": "enable_module", "name": "weather"]], "if_match": "9f2c"],
                 EncodedAnswer(done)),
                (["action": "add_workflow_step", "name": "support", "step": ["id": "b", "task": "reply"], "position": 1], EncodedAnswer(done)),
                (["action": "replace", "text": "{}"], EncodedAnswer(["ok": true, "changed": false, "hash": "9f2c"]))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    /// The members of one change.
    static let changeFields: JSONObject = [
        "action": ["type": "string", "enum": .array(SettingsChangeAction.names.map(JSONValue.string))],
        "name": ["type": "string", "minLength": 1, "description": "The module, process or workflow (every action but replace)."],
        "settings": ["type": "object", "description": "add_process, set_process: the process's whole settings object; add_workflow, set_workflow: the workflow's definition."],
        "step": ["type": "object", "description": "add_workflow_step: the step object."],
        "position": ["type": "integer", "minimum": 0, "description": "add_workflow_step: the step's index in the workflow's steps (absent: last)."],
        "text": ["type": "string", "description": "replace: the whole document as text."],
    ]

    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.settingsChange(request, respond: respond)
    }
}
