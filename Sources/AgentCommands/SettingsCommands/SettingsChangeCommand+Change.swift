import AgentBase
import JSONSchema

extension SettingsChangeCommand {
    /// One change of the settings document, decoded with the members its action needs and no
    /// other (each refusal at the member's pointer: `/changes/1/name`):
    ///
    /// ```json
    /// {"action": "enable_module", "name": "weather"}
    /// {"action": "add_process", "name": "station", "settings": {"type": "weather_feed"}}
    /// {"action": "replace", "text": "{\n  \"enabled_modules\": []\n}\n"}
    /// {"action": "add_workflow_step", "name": "support", "step": {"id": "b", "task": "reply"}, "position": 1}
    /// ```
    ///
    /// The root applies it to the file's text (``SettingsChangeAction``).
    package struct Change: Codable, Sendable, Equatable {
        package var action: SettingsChangeAction
        /// The module, process or workflow (every action but `replace`).
        package var name: String
        /// `add_process`, `set_process`: the process's whole settings object; `add_workflow`,
        /// `set_task`, …: the resource's whole definition.
        package var settings: JSONObject
        /// `add_workflow_step`: the step object, and where it goes in the workflow's top-level
        /// steps (0 first; nil: last).
        package var step: JSONObject
        package var position: Int?
        /// `replace`: the whole document as text.
        package var text: String

        package init(action: SettingsChangeAction, name: String = "", settings: JSONObject = [:], step: JSONObject = [:], position: Int? = nil,
                     text: String = "") {
            self.action = action
            self.name = name
            self.settings = settings
            self.step = step
            self.position = position
            self.text = text
        }

        package init(from decoder: any Decoder) throws {
            try self.init(Members(from: decoder), at: decoder.codingPath)
        }

        /// The members the action takes, and no other.
        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: Members.CodingKeys.self)
            try container.encode(action.rawValue, forKey: .action)
            let members = action.members
            if members.contains(.name) { try container.encode(name, forKey: .name) }
            if members.contains(.settings) { try container.encode(settings, forKey: .settings) }
            if members.contains(.step) { try container.encode(step, forKey: .step) }
            if members.contains(.position) { try container.encodeIfPresent(position, forKey: .position) }
            if members.contains(.text) { try container.encode(text, forKey: .text) }
        }

        /// The members of a change as given, each optional (their types checked by decoding).
        struct Members: Decodable {
            var action: String?
            var name: String?
            var settings: JSONObject?
            var step: JSONObject?
            var position: Int?
            var text: String?

            enum CodingKeys: String, CodingKey, CaseIterable {
                case action, name, settings, step, position, text
            }

            /// The members given.
            var given: [CodingKeys] {
                CodingKeys.allCases.filter { key in
                    switch key {
                    case .action: action != nil
                    case .name: name != nil
                    case .settings: settings != nil
                    case .step: step != nil
                    case .position: position != nil
                    case .text: text != nil
                    }
                }
            }
        }

        /// The change `members` make, or the refusal of the first member its action needs and
        /// lacks, or does not take; `path` is where the change is in the request.
        init(_ members: Members, at path: [any CodingKey]) throws {
            func refuse(_ key: Members.CodingKeys?, _ message: String) -> DecodingError {
                .dataCorrupted(.init(codingPath: path + (key.map { [$0] } ?? []), debugDescription: message))
            }
            let names = SettingsChangeAction.names
            guard let given = members.action else {
                throw refuse(nil, "a change needs \"action\": one of \(names.joined(separator: ", "))")
            }
            guard let action = SettingsChangeAction(rawValue: given) else {
                throw refuse(.action, "expected one of \(names.joined(separator: ", ")); found \"\(given)\"\(Suggestions.hint(for: given, in: names))")
            }
            self.init(action: action, name: members.name ?? "", settings: members.settings ?? [:], step: members.step ?? [:],
                      position: members.position, text: members.text ?? "")
            let takes = action.members
            if takes.contains(.text), members.text == nil {
                throw refuse(.text, "replace needs \"text\": the whole settings document as a string")
            }
            if takes.contains(.name) {
                guard let name = members.name else { throw refuse(.name, "\(given) needs \"name\" (a string)") }
                guard !name.isEmpty else { throw refuse(.name, "expected a non-empty string, found \"\"") }
            }
            if takes.contains(.settings), members.settings == nil {
                let example = action.resourceChange.map { JSONValue.object($0.resource.example).serialized() } ?? "{\"type\": \"…\"}"
                let what = action.resourceChange.map { "the \($0.resource.rawValue)'s definition" } ?? "the process's settings"
                throw refuse(.settings, "\(given) needs \"settings\": \(what) object, e.g. \(example)")
            }
            if takes.contains(.step), members.step == nil {
                throw refuse(.step, "add_workflow_step needs \"step\": a step object, e.g. {\"id\": \"notify\", \"publish\": {\"type\": \"…\"}}")
            }
            if let position = members.position, position < 0 {
                throw refuse(.position, "expected the step's index in the workflow's steps (an integer ≥ 0; absent: last), found \(position)")
            }
            if let stray = members.given.first(where: { !takes.contains($0) }) {
                throw refuse(stray, "unknown property \"\(stray.rawValue)\" of \(given); allowed: \(takes.map(\.rawValue).joined(separator: ", "))")
            }
        }
    }
}

extension SettingsChangeAction {
    /// The members a change with this action takes (`action` first).
    var members: [SettingsChangeCommand.Change.Members.CodingKeys] {
        switch self {
        case .replace: [.action, .text]
        case .addProcess, .setProcess: [.action, .name, .settings]
        case .addWorkflowStep: [.action, .name, .step, .position]
        default: resourceChange.map { $0.verb == .remove ? [.action, .name] : [.action, .name, .settings] } ?? [.action, .name]
        }
    }
}
