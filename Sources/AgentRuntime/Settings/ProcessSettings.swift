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
    /// Restart, stop and watchdog policy.
    public var policy: ProcessPolicy
    /// The settings for the module: everything but the host-level keys.
    public var moduleSettings: JSONObject
    /// The process's whole entry, as written.
    public var raw: JSONValue
    /// JSON pointer of the entry, e.g. `/processes/trades`.
    public var pointer: String

    /// Keys the host reads and removes before the module sees the settings.
    public static let hostKeys = ["type", "enabled", "module", "subscribe"] + ProcessPolicy.keys

    init(name: String, json: JSONValue, pointer: String, file: String) throws {
        self.name = name
        self.pointer = pointer
        raw = json
        var issues: [SettingsIssue] = []
        func issue(_ key: String, _ message: String) {
            issues.append(SettingsIssue(file: file, pointer: "\(pointer)/\(key)", message: message, process: name))
        }
        guard let object = json.objectValue else {
            throw SettingsError([SettingsIssue(file: file, pointer: pointer, message: "expected an object with at least \"type\", found \(Describe.value(json))", process: name)])
        }
        switch object["type"] {
        case .string(let t)? where !t.isEmpty: type = t
        case nil:
            type = ""
            issues.append(SettingsIssue(file: file, pointer: pointer, message: "missing \"type\": the process type to run, e.g. \"trade_feed\"", process: name))
        case let other?:
            type = ""
            issue("type", "expected a process type name (string), found \(Describe.value(other))")
        }
        switch object["enabled"] {
        case nil: enabled = true
        case .bool(let b)?: enabled = b
        case let other?:
            enabled = false
            issue("enabled", "expected true or false, found \(Describe.value(other))")
        }
        switch object["module"] {
        case nil: module = nil
        case .string(let m)?: module = m
        case let other?:
            module = nil
            issue("module", "expected a module name (string), found \(Describe.value(other))")
        }
        switch object["subscribe"] {
        case nil: subscribe = nil
        case .array(let items)? where items.allSatisfy({ $0.stringValue?.isEmpty == false }):
            subscribe = items.compactMap(\.stringValue)
        case let other?:
            subscribe = nil
            issue("subscribe", "expected an array of event types (strings), found \(Describe.value(other))")
        }
        policy = ProcessPolicy(object, pointer: pointer, file: file, process: name, issues: &issues)
        var settings = object
        for key in Self.hostKeys { settings[key] = nil }
        moduleSettings = settings
        if !issues.isEmpty { throw SettingsError(issues) }
    }

    /// Why `name` cannot name a process, or nil if it can.
    static func nameProblem(_ name: String) -> String? {
        if name.isEmpty { return "a process name must not be empty" }
        if name.utf8.count > 200 { return "a process name must be at most 200 bytes long" }
        let allowed = name.unicodeScalars.allSatisfy { $0.properties.isAlphabetic || ("0"..."9").contains($0) || "_-.".unicodeScalars.contains($0) }
        return allowed ? nil : "process name \"\(name)\" may contain only letters, digits, '_', '-' and '.'"
    }
}
