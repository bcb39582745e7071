import AgentBase
import AgentCore
import JSONSchema

/// One configured process: its name, type, host-level keys, and the settings passed to the
/// module (host-level keys removed).
public struct ProcessSettings: Sendable, Equatable {
    public var name: String
    public var type: String
    public var enabled: Bool
    /// Which module provides the type, when two enabled modules both do.
    public var module: String?
    /// Event types to receive (monitors); nil means the type's default subscriptions.
    public var subscribe: [String]?
    /// `replicas`: how many workers run this process (`NAME#1 … NAME#N`); nil: one worker
    /// named NAME. Clamped to 1…``SettingsBounds/mostReplicas`` (the host schema reports a
    /// value outside).
    public var replicas: Int?
    /// Restart, stop and watchdog policy.
    public var policy: ProcessPolicy
    /// The settings for the module: everything but the host-level keys.
    public var moduleSettings: JSONObject
    /// The process's whole entry, as written.
    public var raw: JSONValue
    /// JSON pointer of the entry, e.g. `/processes/trades`.
    public var pointer: String

    /// Keys the host reads and removes before the module sees the settings.
    public static let hostKeys = ["type", "enabled", "module", "subscribe", "replicas"] + ProcessPolicy.keys

    /// Reads what can be read; the host schema reports what is wrong. Nil if the entry is not
    /// an object.
    package init?(name: String, json: JSONValue, pointer: String) {
        guard let object = json.objectValue else { return nil }
        self.name = name
        self.pointer = pointer
        raw = json
        type = object["type"]?.stringValue ?? ""
        enabled = object["enabled"]?.boolValue ?? true
        module = object["module"]?.stringValue
        subscribe = object["subscribe"]?.arrayValue.map { $0.compactMap(\.stringValue) }
        policy = ProcessPolicy(object)
        if let number = object["replicas"]?.numberValue {
            // 1e30 or 2.5 are the schema's to refuse; read, they saturate (never trap).
            replicas = min(max(1, number.intValue ?? Int(saturating: number.doubleValue)), SettingsBounds.mostReplicas)
        }
        var settings = object
        for key in Self.hostKeys { settings[key] = nil }
        moduleSettings = settings
    }

    /// Why `name` cannot name a process, or nil if it can (see ``PlainName``).
    package static func nameProblem(_ name: String) -> String? {
        PlainName.problem(name, what: "process name")
    }
}
