/// One setting of a ``SettingsDeclaration``: its value, and what the JSON Schema says about it
/// (default, bounds, description, JSON key). Declared once, it gives both the decoding and the
/// schema:
///
/// ```swift
/// struct Settings: SettingsDeclaration {
///     @Setting(minimum: 0.1, description: "Seconds between two samples.")
///     var intervalSeconds: Double = 5                    // "interval_seconds", default 5
///     @Setting("path", minLength: 1, description: "The file to watch.")
///     var file: String                                   // no default: required
///     @Setting(description: "Stop after this many lines (none: never).")
///     var limit: Int?                                    // optional, absent → nil
/// }
/// ```
///
/// The JSON key is the property's name in snake_case unless given as the first argument. A
/// setting with a value (`= 5`) has that value as its default; one without is required,
/// except an optional, which is nil when absent. The bounds a type takes are those of its
/// kind: numbers (``NumberSetting``), strings (``TextSetting``), arrays (``ListSetting``);
/// booleans, enums (``SettingEnum``) and nested declarations take a description only.
@propertyWrapper
public struct Setting<Value: SettingValue>: Sendable {
    /// The value, shared between copies until one of them changes it (copy on write).
    private var storage: SettingStorage<Value>
    let info: SettingInfo

    init(value: Value?, key: String?, description: String?, bounds: SettingBounds) {
        // An optional without a value is nil, not missing.
        let value = value ?? (Value.self as? any OptionalSetting.Type)?.nilValue as? Value
        storage = SettingStorage(value)
        info = SettingInfo(key: key, description: description, bounds: bounds, declared: value)
    }

    /// A setting without bounds or description (`@Setting var limit: Int?`): required, or nil
    /// when absent if optional.
    public init() {
        self.init(value: nil, key: nil, description: nil, bounds: .none)
    }

    /// The decoded value (or the default).
    public var wrappedValue: Value {
        get {
            guard let value = storage.value else {
                preconditionFailure("a required @Setting (\(Value.self)) was read before its settings were decoded")
            }
            return value
        }
        set {
            if isKnownUniquelyReferenced(&storage) {
                storage.value = newValue
            } else {
                storage = SettingStorage(newValue)
            }
        }
    }

    /// Sets the value of a freshly made declaration while it is decoded, before any copy of it
    /// escapes (the box is shared with the reflected copy, so the setter cannot be used).
    func decoded(_ value: Value) {
        storage.value = value
    }

    var value: Value? { storage.value }
}

extension Setting: Equatable where Value: Equatable {
    public static func == (lhs: Setting, rhs: Setting) -> Bool { lhs.storage.value == rhs.storage.value }
}

extension Setting: Hashable where Value: Hashable {
    public func hash(into hasher: inout Hasher) { hasher.combine(storage.value) }
}

/// The box behind a ``Setting``'s value. Mutated only while uniquely referenced, or while a
/// fresh declaration is decoded, so sharing it between threads is safe.
final class SettingStorage<Value: Sendable>: @unchecked Sendable {
    var value: Value?

    init(_ value: Value?) { self.value = value }
}

/// What a ``Setting`` declares besides its value.
final class SettingInfo: Sendable {
    let key: String?
    let description: String?
    let bounds: SettingBounds
    /// The default as JSON; nil when the setting has none (required, or an optional).
    let defaultJSON: JSONText?
    /// No value and not optional: the settings must give it.
    let required: Bool

    init<Value: SettingValue>(key: String?, description: String?, bounds: SettingBounds, declared value: Value?) {
        self.key = key
        self.description = description
        self.bounds = bounds
        let json = value.map(\.settingJSON.text)
        defaultJSON = json == JSONText.null ? nil : json
        required = value == nil
    }
}
