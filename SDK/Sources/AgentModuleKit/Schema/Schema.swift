import Foundation

/// A JSON Schema (draft 2020-12) built in Swift, for a process type's settings.
///
/// ```swift
/// static var settingsSchema: Schema {
///     .object([
///         "pairs": .array(of: .string(minLength: 1), minItems: 1, default: ["ETH/USD"],
///                         description: "Trading pairs to simulate."),
///         "interval": .number(minimum: 0.01, default: 0.5, description: "Seconds between trades."),
///     ], required: ["pairs"])
/// }
/// ```
///
/// Objects reject properties they do not declare (`additionalProperties: false`) unless
/// `additionalProperties: true` is passed, so that a misspelt setting is an error, not a
/// silently ignored key.
public struct Schema: Sendable {
    /// The keywords of this schema, in the order they are written.
    var keywords: [(String, JSONText)]
    /// Declared properties of an object schema, kept structurally to fill in defaults.
    var properties: [(String, Schema)]
    /// The `default` value, if any.
    var defaultValue: JSONText?

    init(_ keywords: [(String, JSONText)], properties: [(String, Schema)] = [], defaultValue: JSONText? = nil) {
        self.keywords = keywords
        self.properties = properties
        self.defaultValue = defaultValue
    }

    /// The schema as JSON text.
    public var jsonString: String { json.serialized() }

    var json: JSONText {
        var all = keywords
        if !properties.isEmpty {
            all.insert(("properties", .object(properties.map { ($0.0, $0.1.json) })), at: min(1, all.count))
        }
        if let defaultValue { all.append(("default", defaultValue)) }
        return .object(all)
    }

    // MARK: - Building

    /// A string.
    public static func string(
        minLength: Int? = nil, maxLength: Int? = nil, pattern: String? = nil, format: String? = nil,
        oneOf values: [String]? = nil, default: String? = nil, description: String? = nil
    ) -> Schema {
        var k: [(String, JSONText)] = [("type", .string("string"))]
        if let values { k.append(("enum", .array(values.map(JSONText.string)))) }
        if let minLength { k.append(("minLength", .int(minLength))) }
        if let maxLength { k.append(("maxLength", .int(maxLength))) }
        if let pattern { k.append(("pattern", .string(pattern))) }
        if let format { k.append(("format", .string(format))) }
        return Schema(k, description: description, default: `default`.map(JSONText.string))
    }

    /// A number (integer or not). It is always finite: a side without a finite bound gets
    /// ±`Double.greatestFiniteMagnitude` (see `representableRange`), so that validation refuses
    /// what a `Double` setting cannot hold (`1e400`) instead of the process failing to decode
    /// its settings.
    public static func number(
        minimum: Double? = nil, maximum: Double? = nil,
        exclusiveMinimum: Double? = nil, exclusiveMaximum: Double? = nil,
        default: Double? = nil, description: String? = nil
    ) -> Schema {
        // An infinite (or NaN) bound is no bound, and JSON cannot write it.
        let finite = { (bound: Double?) in bound.flatMap { $0.isFinite ? $0 : nil } }
        let (minimum, maximum) = (finite(minimum), finite(maximum))
        let (exclusiveMinimum, exclusiveMaximum) = (finite(exclusiveMinimum), finite(exclusiveMaximum))
        var k: [(String, JSONText)] = [("type", .string("number"))]
        if let minimum { k.append(("minimum", .double(minimum))) }
        if let maximum { k.append(("maximum", .double(maximum))) }
        if let exclusiveMinimum { k.append(("exclusiveMinimum", .double(exclusiveMinimum))) }
        if let exclusiveMaximum { k.append(("exclusiveMaximum", .double(exclusiveMaximum))) }
        var representable: [(String, JSONText)] = []
        if minimum == nil, exclusiveMinimum == nil { representable.append(("minimum", .double(-.greatestFiniteMagnitude))) }
        if maximum == nil, exclusiveMaximum == nil { representable.append(("maximum", .double(.greatestFiniteMagnitude))) }
        if !representable.isEmpty { k.append(representableRange(representable)) }
        return Schema(k, description: description, default: `default`.map(JSONText.double))
    }

    /// An integer. It is always within `Int`'s range: a side without a bound gets `Int.min`
    /// or `Int.max` (see `representableRange`), so that validation refuses what an `Int`
    /// setting cannot hold (`1e29`) instead of the process failing to decode its settings.
    public static func integer(
        minimum: Int? = nil, maximum: Int? = nil, default: Int? = nil, description: String? = nil
    ) -> Schema {
        var k: [(String, JSONText)] = [("type", .string("integer"))]
        if let minimum { k.append(("minimum", .int(minimum))) }
        if let maximum { k.append(("maximum", .int(maximum))) }
        var representable: [(String, JSONText)] = []
        if minimum == nil { representable.append(("minimum", .int(.min))) }
        if maximum == nil { representable.append(("maximum", .int(.max))) }
        if !representable.isEmpty { k.append(representableRange(representable)) }
        return Schema(k, description: description, default: `default`.map(JSONText.int))
    }

    /// The bounds of what the Swift type can hold, in an `allOf` of their own: a value beyond
    /// them is refused (`expected an integer ≤ 9223372036854775807, found 1e29`), while a
    /// wrong type is still reported with the bounds the module chose, not these.
    private static func representableRange(_ bounds: [(String, JSONText)]) -> (String, JSONText) {
        ("allOf", .array([.object(bounds)]))
    }

    /// A boolean.
    public static func boolean(default: Bool? = nil, description: String? = nil) -> Schema {
        Schema([("type", .string("boolean"))], description: description, default: `default`.map(JSONText.bool))
    }

    /// An array whose items all match `items`.
    public static func array(
        of items: Schema, minItems: Int? = nil, maxItems: Int? = nil, uniqueItems: Bool = false,
        default: [String]? = nil, description: String? = nil
    ) -> Schema {
        var k: [(String, JSONText)] = [("type", .string("array")), ("items", items.json)]
        if let minItems { k.append(("minItems", .int(minItems))) }
        if let maxItems { k.append(("maxItems", .int(maxItems))) }
        if uniqueItems { k.append(("uniqueItems", .bool(true))) }
        return Schema(k, description: description, default: `default`.map { .array($0.map(JSONText.string)) })
    }

    /// An object with the given properties, in order. Unknown properties are rejected unless
    /// `additionalProperties` is true.
    public static func object(
        _ properties: KeyValuePairs<String, Schema>, required: [String] = [],
        additionalProperties: Bool = false, description: String? = nil
    ) -> Schema {
        object(properties.map { ($0.key, $0.value) }, required: required, additionalProperties: additionalProperties,
               description: description)
    }

    /// An object from properties in a list (what a ``SettingsDeclaration`` builds).
    static func object(
        _ properties: [(String, Schema)], required: [String] = [],
        additionalProperties: Bool = false, description: String? = nil
    ) -> Schema {
        var k: [(String, JSONText)] = [("type", .string("object"))]
        if !required.isEmpty { k.append(("required", .array(required.map(JSONText.string)))) }
        if !additionalProperties { k.append(("additionalProperties", .bool(false))) }
        var schema = Schema(k, description: description, default: nil)
        schema.properties = properties
        return schema
    }

    /// An object whose values all match `values` (a map from names to settings).
    public static func map(of values: Schema, description: String? = nil) -> Schema {
        Schema([("type", .string("object")), ("additionalProperties", values.json)], description: description, default: nil)
    }

    /// A value that matches exactly one of `schemas`.
    public static func oneOf(_ schemas: [Schema], description: String? = nil) -> Schema {
        Schema([("oneOf", .array(schemas.map(\.json)))], description: description, default: nil)
    }

    private init(_ keywords: [(String, JSONText)], description: String?, default value: JSONText?) {
        var k = keywords
        if let description { k.append(("description", .string(description))) }
        self.init(k, defaultValue: value)
    }
}
