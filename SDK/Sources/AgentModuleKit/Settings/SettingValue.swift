import Foundation

/// A type a ``Setting`` can hold: it knows its JSON Schema, how to write a value as JSON (for
/// the schema's `default`) and how to decode one.
///
/// The SDK provides `Int`, `Double`, `Bool`, `String`, `URL`, arrays and optionals of these,
/// enums with String raw values (``SettingEnum``) and nested ``SettingsDeclaration``s.
public protocol SettingValue: Decodable, Sendable {
    /// The JSON Schema of a value of this type with `bounds` (those that do not apply to the
    /// type are left out).
    static func settingSchema(_ bounds: SettingBounds) -> Schema
    /// This value as JSON.
    var settingJSON: SettingJSON { get }
    /// Decodes a value; by default with `init(from:)`.
    static func decodeSetting(from decoder: any Decoder) throws -> Self
}

extension SettingValue {
    /// With `init(from:)`.
    public static func decodeSetting(from decoder: any Decoder) throws -> Self { try Self(from: decoder) }
}

/// A number setting (`Int`, `Double`, or an optional of one): takes `minimum`, `maximum`,
/// `exclusiveMinimum` and `exclusiveMaximum`, of its own type (``Bound``).
public protocol NumberSetting: SettingValue {
    /// The type of its bounds: `Int` for integers, `Double` for numbers.
    associatedtype Bound: Sendable
    /// The bounds as ``SettingBounds``.
    static func bounds(minimum: Bound?, maximum: Bound?, exclusiveMinimum: Bound?, exclusiveMaximum: Bound?) -> SettingBounds
}
/// A string setting (`String`, `URL`, or an optional of one): takes `minLength`, `maxLength`,
/// `pattern`, `format` and `oneOf` (the allowed values).
public protocol TextSetting: SettingValue {}
/// An array setting: takes `minItems`, `maxItems`, `uniqueItems` and the bounds of `each` item.
public protocol ListSetting: SettingValue {}
/// A setting that takes no bounds, only a description: `Bool`, ``SettingEnum``s, nested
/// ``SettingsDeclaration``s, and optionals of these.
public protocol PlainSetting: SettingValue {}

/// A JSON value, as a ``SettingValue`` writes itself (for the schema's `default`).
public struct SettingJSON: Sendable {
    let text: JSONText

    init(_ text: JSONText) { self.text = text }

    /// The JSON encoding of `value` (null if it cannot be encoded).
    public init(encoding value: some Encodable) {
        guard let data = try? JSONEncoder().encode(value),
              let object = try? JSONSerialization.jsonObject(with: data, options: [.fragmentsAllowed])
        else {
            self.init(.null)
            return
        }
        self.init(JSONText(foundation: object))
    }
}

/// The bounds of a setting, as the JSON Schema keywords of its kind. ``Setting``'s
/// initializers fill them in; `each` is for the items of an array.
public struct SettingBounds: Sendable {
    var minimum: Double?
    var maximum: Double?
    var exclusiveMinimum: Double?
    var exclusiveMaximum: Double?
    /// The inclusive bounds of an integer, exactly.
    var integerMinimum: Int?
    var integerMaximum: Int?
    var minLength: Int?
    var maxLength: Int?
    var pattern: String?
    var format: String?
    var allowed: [String]?
    var minItems: Int?
    var maxItems: Int?
    var uniqueItems = false
    /// The bounds of each item of an array (none or one; an array keeps the struct finite).
    var items: [SettingBounds] = []

    /// No bounds.
    public static let none = SettingBounds()

    /// Bounds of a number.
    public static func number(
        minimum: Double? = nil, maximum: Double? = nil, exclusiveMinimum: Double? = nil, exclusiveMaximum: Double? = nil
    ) -> SettingBounds {
        var bounds = SettingBounds()
        (bounds.minimum, bounds.maximum) = (minimum, maximum)
        (bounds.exclusiveMinimum, bounds.exclusiveMaximum) = (exclusiveMinimum, exclusiveMaximum)
        return bounds
    }

    /// Bounds of an integer (exclusive bounds become the inclusive ones an integer can reach).
    public static func integer(minimum: Int? = nil, maximum: Int? = nil, exclusiveMinimum: Int? = nil, exclusiveMaximum: Int? = nil) -> SettingBounds {
        var bounds = SettingBounds()
        let low = exclusiveMinimum.map { $0 == .max ? $0 : $0 + 1 }
        let high = exclusiveMaximum.map { $0 == .min ? $0 : $0 - 1 }
        bounds.integerMinimum = [minimum, low].compactMap { $0 }.max()
        bounds.integerMaximum = [maximum, high].compactMap { $0 }.min()
        return bounds
    }

    /// Bounds of a string; `oneOf` lists the values allowed (the schema's `enum`).
    public static func string(
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, format: String? = nil, oneOf: [String]? = nil
    ) -> SettingBounds {
        var bounds = SettingBounds()
        (bounds.minLength, bounds.maxLength, bounds.pattern, bounds.format, bounds.allowed) = (minLength, maxLength, pattern, format, oneOf)
        return bounds
    }

    /// Bounds of an array; `each` bounds its items.
    public static func array(minItems: Int? = nil, maxItems: Int? = nil, uniqueItems: Bool = false, each: SettingBounds = .none) -> SettingBounds {
        var bounds = SettingBounds()
        (bounds.minItems, bounds.maxItems, bounds.uniqueItems, bounds.items) = (minItems, maxItems, uniqueItems, [each])
        return bounds
    }

    var each: SettingBounds { items.first ?? .none }
}
