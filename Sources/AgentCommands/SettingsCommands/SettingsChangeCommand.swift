import AgentBase
import JSONSchema

/// `settings_change`: changes the settings: checked, written keeping the file's formatting, applied by reload.
package enum SettingsChangeCommand: AgentCommand {
    package typealias Host = any SettingsCommandHost
    /// One change at the top level (its members beside `if_match`), or several in `changes`,
    /// applied together.
    package struct Request: Codable, Sendable, Equatable {
        package var changes: [Change]
        package var ifMatch: String?
        /// Given as the list `changes` (and encoded so again).
        package var listed: Bool

        package init(_ change: Change, ifMatch: String? = nil) {
            changes = [change]
            self.ifMatch = ifMatch
            listed = false
        }

        package init(changes: [Change], ifMatch: String? = nil) {
            self.changes = changes
            self.ifMatch = ifMatch
            listed = true
        }

        enum CodingKeys: String, CodingKey {
            case changes
            case ifMatch = "if_match"
        }

        package init(from decoder: any Decoder) throws {
            let single = try Change.Members(from: decoder)
            let container = try decoder.container(keyedBy: CodingKeys.self)
            ifMatch = try container.decodeIfPresent(String.self, forKey: .ifMatch)
            guard let list = try container.decodeIfPresent([Change].self, forKey: .changes) else {
                changes = [try Change(single, at: decoder.codingPath)]
                listed = false
                return
            }
            if let stray = single.given.first {
                throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath + [stray],
                                                        debugDescription: "unknown property \"\(stray.rawValue)\" beside \"changes\"; allowed: changes, if_match"))
            }
            changes = list
            listed = true
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            if listed {
                try container.encode(changes, forKey: .changes)
            } else if let change = changes.first {
                try change.encode(to: encoder)
            }
            try container.encodeIfPresent(ifMatch, forKey: .ifMatch)
        }
    }

    /// What the change did: the file's path and hash; once written, what its reload did (as
    /// `reload` answers it), else why nothing was written.
    package struct Answer: Encodable, Sendable, Equatable {
        package var path: String
        /// The file's hash now (send it back as `if_match`).
        package var hash: String
        /// Written and reloaded: what the reload did.
        package var applied: ReloadCommand.Answer?
        /// Nothing written: why.
        package var message: String?

        /// Whether the file was written.
        package var changed: Bool { applied != nil }

        /// Written, and applied by a reload.
        package init(path: String, hash: String, applied: ReloadCommand.Answer) {
            self.path = path
            self.hash = hash
            self.applied = applied
        }

        /// Nothing written.
        package init(path: String, hash: String, unchanged message: String) {
            self.path = path
            self.hash = hash
            self.message = message
        }

        enum CodingKeys: String, CodingKey {
            case ok, changed, path, hash, message
        }

        /// Written: the reload's answer, then the file's members (the order the answer always had).
        package func encode(to encoder: any Encoder) throws {
            if let applied { try applied.encode(to: encoder) }
            var container = encoder.container(keyedBy: CodingKeys.self)
            if applied == nil { try container.encode(true, forKey: .ok) }
            try container.encode(changed, forKey: .changed)
            try container.encode(path, forKey: .path)
            try container.encode(hash, forKey: .hash)
            try container.encodeIfPresent(message, forKey: .message)
        }
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
    package static let answerSchema: JSONValue = {
        var properties = ReloadCommand.Answer.properties
        properties["ok"] = ["const": true]
        properties["changed"] = ["type": "boolean", "description": "Whether the file was written (and reloaded: kept, restarted, started, stopped, notes)."]
        properties["path"] = ["type": "string"]
        properties["hash"] = ["type": "string"]
        properties["message"] = ["type": "string", "description": "Why nothing was written."]
        return CommandSchema.object(properties, required: ["ok", "changed", "path", "hash"])
    }()
    package static var examples: [(request: JSONValue, answer: Answer)] {
        let done = Answer(path: "/etc/agent/agent.json", hash: "9f2c", applied: ReloadCommand.Answer(started: ["station"]))
        return [(["action": "add_process", "name": "station", "settings": ["type": "weather_feed"]], done),
                (["changes": [["action": "disable_process", "name": "trades"], ["action": "enable_module", "name": "weather"]], "if_match": "9f2c"], done),
                (["action": "add_workflow_step", "name": "support", "step": ["id": "b", "task": "reply"], "position": 1], done),
                (["action": "replace", "text": "{}"], Answer(path: "/etc/agent/agent.json", hash: "9f2c", unchanged: "the settings already say so: nothing was written, nothing reloaded"))]
    }
    package static var unavailable: CommandError {
        .unavailable("this agent was not started from a settings file: its settings cannot be read or changed here")
    }

    /// The members of one change.
    static let changeFields: JSONObject = [
        "action": ["type": "string", "enum": .array(SettingsChangeAction.names.map(JSONValue.string))],
        "name": ["type": "string", "minLength": 1, "description": "The module, process, workflow, task, schedule or executor (every action but replace)."],
        "settings": ["type": "object", "description": "add_process, set_process: the process's whole settings object; add_workflow, set_workflow, add_task, set_task, add_schedule, set_schedule, add_executor, set_executor: the definition (an executor's \"type\" may be left out)."],
        "step": ["type": "object", "description": "add_workflow_step: the step object."],
        "position": ["type": "integer", "minimum": 0, "description": "add_workflow_step: the step's index in the workflow's steps (absent: last)."],
        "text": ["type": "string", "description": "replace: the whole document as text."],
    ]

    package static func run(_ request: Request, on host: any SettingsCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.settingsChange(request, respond: respond)
    }
}
