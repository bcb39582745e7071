import AgentBase
import JSONSchema

/// What a resource change command answers: `settings_change`'s answer (`changed`, `path`,
/// `hash`, what the reload kept, restarted, started, stopped…) and the resource's name under
/// its kind (`"task": "backup"`), as the workflow definitions answer `"workflow"`.
package struct ResourceChangeAnswer: Encodable, Sendable {
    package var change: SettingsChangeCommand.Answer
    package var resource: SettingsResource
    package var name: String

    package init(change: SettingsChangeCommand.Answer, resource: SettingsResource, name: String) {
        self.change = change
        self.resource = resource
        self.name = name
    }

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    package func encode(to encoder: any Encoder) throws {
        try change.encode(to: encoder)
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(name, forKey: Key(stringValue: resource.rawValue))
    }
}
