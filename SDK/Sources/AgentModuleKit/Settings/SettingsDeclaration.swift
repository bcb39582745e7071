import Foundation

/// Settings declared once, with ``Setting`` properties: the JSON Schema (``schema``) and the
/// decoding (`init(from:)`) both come from the declaration, read by reflection over a default
/// instance (`init()`), so that they cannot drift apart.
///
/// ```swift
/// struct Settings: SettingsDeclaration {
///     @Setting(minimum: 0.01, description: "Seconds between two readings.")
///     var interval: Double = 1
///     @Setting(minItems: 1, each: .string(minLength: 1), description: "Pairs to watch.")
///     var pairs: [String] = ["ETH/USD"]
///     @Setting(description: "Where to send alerts.")
///     var target: URL                                  // required
/// }
/// ```
///
/// A process or adapter whose `Settings` is a declaration gets its `settingsSchema` from it;
/// a task's input declared so has ``schema`` as its input schema. A missing key gets the
/// declared default; a missing
/// required one, or a value of the wrong type, is an error that names its JSON pointer.
/// Properties that are not ``Setting``s are neither decoded nor in the schema. The object
/// rejects keys it does not declare (`additionalProperties: false`).
public protocol SettingsDeclaration: PlainSetting {
    /// The default instance: every ``Setting`` with its declared default (the compiler
    /// provides it when every stored property has an initial value or is a ``Setting``).
    init()
}

extension SettingsDeclaration {
    /// The JSON Schema (draft 2020-12) of these settings: an object with one property per
    /// ``Setting``, in declaration order; those without a default are required.
    public static var schema: Schema {
        let properties = Self().declaredSettings.map { $0.setting.property(named: $0.name) }
        var seen: Set<String> = []
        for property in properties where !seen.insert(property.key).inserted {
            preconditionFailure("\(Self.self) declares two settings with the JSON key \"\(property.key)\"")
        }
        return .object(properties.map { ($0.key, $0.schema) }, required: properties.filter(\.required).map(\.key))
    }

    /// The declaration's own object schema (``schema``): a nested group of settings.
    public static func settingSchema(_ bounds: SettingBounds) -> Schema { schema }

    /// The values of the settings as a JSON object (nil optionals left out).
    public var settingJSON: SettingJSON {
        SettingJSON(.object(declaredSettings.compactMap { $0.setting.json(named: $0.name) }))
    }

    /// Decodes the settings: each ``Setting`` from its key, the declared default when absent.
    public init(from decoder: any Decoder) throws {
        self.init()
        let container = try decoder.container(keyedBy: SettingKey.self)
        for (name, setting) in declaredSettings {
            try setting.decode(from: container, named: name)
        }
    }

    /// The ``Setting`` properties, by property name (without the wrapper's `_`).
    var declaredSettings: [(name: String, setting: any DeclaredSetting)] {
        Mirror(reflecting: self).children.compactMap { child in
            guard let setting = child.value as? any DeclaredSetting, let label = child.label else { return nil }
            return (label.hasPrefix("_") ? String(label.dropFirst()) : label, setting)
        }
    }
}

/// What a declaration reads of each of its ``Setting``s, with the value type erased.
protocol DeclaredSetting {
    func property(named name: String) -> (key: String, schema: Schema, required: Bool)
    func json(named name: String) -> (String, JSONText)?
    func decode(from container: KeyedDecodingContainer<SettingKey>, named name: String) throws
}

extension Setting: DeclaredSetting {
    func key(named name: String) -> String { info.key ?? SettingKey.snakeCase(name) }

    func property(named name: String) -> (key: String, schema: Schema, required: Bool) {
        var schema = Value.settingSchema(info.bounds)
        if let description = info.description { schema.keywords.append(("description", .string(description))) }
        schema.defaultValue = info.defaultJSON
        return (key(named: name), schema, info.required)
    }

    func json(named name: String) -> (String, JSONText)? {
        guard let json = value?.settingJSON.text, json != .null else { return nil }
        return (key(named: name), json)
    }

    func decode(from container: KeyedDecodingContainer<SettingKey>, named name: String) throws {
        let key = SettingKey(stringValue: key(named: name))
        guard container.contains(key) else {
            guard !info.required else {
                throw DecodingError.keyNotFound(key, .init(codingPath: container.codingPath,
                                                           debugDescription: "missing required setting \"\(key.stringValue)\""))
            }
            return
        }
        if !(Value.self is any OptionalSetting.Type), try container.decodeNil(forKey: key) {
            throw DecodingError.valueNotFound(Value.self, .init(codingPath: container.codingPath + [key],
                                                                debugDescription: "\(key.stringValue) is null"))
        }
        decoded(try Value.decodeSetting(from: container.superDecoder(forKey: key)))
    }
}

/// A JSON key of a declaration.
struct SettingKey: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }

    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }

    /// `intervalSeconds` → `interval_seconds`, `maxURLLength` → `max_url_length`;
    /// a name already in snake_case stays as it is.
    static func snakeCase(_ name: String) -> String {
        let characters = Array(name)
        var out = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) { out += "_" }
            }
            out += character.lowercased()
        }
        return out
    }
}
