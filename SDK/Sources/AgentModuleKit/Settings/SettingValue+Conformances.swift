import Foundation

extension Int: NumberSetting {
    /// Integer bounds (`minimum`, `maximum`, and the exclusive ones).
    public static func bounds(minimum: Int?, maximum: Int?, exclusiveMinimum: Int?, exclusiveMaximum: Int?) -> SettingBounds {
        .integer(minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, exclusiveMaximum: exclusiveMaximum)
    }

    /// An integer schema; exclusive bounds become the inclusive ones an integer can reach
    /// (bounds given as numbers, e.g. an array's `each: .number(...)`, are rounded inwards).
    public static func settingSchema(_ bounds: SettingBounds) -> Schema {
        if bounds.integerMinimum != nil || bounds.integerMaximum != nil {
            return .integer(minimum: bounds.integerMinimum, maximum: bounds.integerMaximum)
        }
        func inclusive(_ bound: Double?, _ exclusive: Double?, rounding: FloatingPointRoundingRule, step: Int) -> Int? {
            let fromInclusive = bound.flatMap { Int(exactly: $0.rounded(rounding)) }
            let fromExclusive = exclusive.flatMap { Int(exactly: $0.rounded(rounding == .up ? .down : .up)) }.map { $0 + step }
            switch (fromInclusive, fromExclusive) {
            case let (a?, b?): return step > 0 ? Swift.max(a, b) : Swift.min(a, b)
            case let (a, b): return a ?? b
            }
        }
        return .integer(minimum: inclusive(bounds.minimum, bounds.exclusiveMinimum, rounding: .up, step: 1),
                        maximum: inclusive(bounds.maximum, bounds.exclusiveMaximum, rounding: .down, step: -1))
    }

    /// The integer as a JSON number.
    public var settingJSON: SettingJSON { SettingJSON(.int(self)) }
}

extension Double: NumberSetting {
    /// Number bounds (`minimum`, `maximum`, and the exclusive ones).
    public static func bounds(minimum: Double?, maximum: Double?, exclusiveMinimum: Double?, exclusiveMaximum: Double?) -> SettingBounds {
        .number(minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, exclusiveMaximum: exclusiveMaximum)
    }

    /// A number schema with the bounds given (integer bounds as numbers).
    public static func settingSchema(_ bounds: SettingBounds) -> Schema {
        .number(minimum: bounds.minimum ?? bounds.integerMinimum.map(Double.init),
                maximum: bounds.maximum ?? bounds.integerMaximum.map(Double.init),
                exclusiveMinimum: bounds.exclusiveMinimum, exclusiveMaximum: bounds.exclusiveMaximum)
    }

    /// The number as JSON.
    public var settingJSON: SettingJSON { SettingJSON(.double(self)) }
}

extension String: TextSetting {
    /// A string schema with the length, pattern, format and allowed values given.
    public static func settingSchema(_ bounds: SettingBounds) -> Schema {
        .string(minLength: bounds.minLength, maxLength: bounds.maxLength, pattern: bounds.pattern,
                format: bounds.format, oneOf: bounds.allowed)
    }

    /// The string as a JSON string.
    public var settingJSON: SettingJSON { SettingJSON(.string(self)) }
}

extension URL: TextSetting {
    /// A string in `format: uri` (unless another format is given).
    public static func settingSchema(_ bounds: SettingBounds) -> Schema {
        .string(minLength: bounds.minLength, maxLength: bounds.maxLength, pattern: bounds.pattern,
                format: bounds.format ?? "uri", oneOf: bounds.allowed)
    }

    /// The URL as a JSON string.
    public var settingJSON: SettingJSON { SettingJSON(.string(absoluteString)) }

    /// From a JSON string with a scheme (Foundation's own `URL` decoding expects an object outside
    /// `JSONDecoder`'s special case).
    public static func decodeSetting(from decoder: any Decoder) throws -> URL {
        let text = try decoder.singleValueContainer().decode(String.self)
        // Absolute, as `format: uri` asks.
        guard let url = URL(string: text), url.scheme != nil else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected an absolute URL, found \"\(text)\""))
        }
        return url
    }
}

extension Bool: PlainSetting {
    /// A boolean schema (bounds do not apply).
    public static func settingSchema(_ bounds: SettingBounds) -> Schema { .boolean() }
    /// `true` or `false`.
    public var settingJSON: SettingJSON { SettingJSON(.bool(self)) }
}

/// Lets a ``Setting`` tell an optional without a value (nil) from a missing required one.
protocol OptionalSetting {
    static var nilValue: Any { get }
}

extension Optional: OptionalSetting where Wrapped: SettingValue {
    static var nilValue: Any { Wrapped?(nil) as Any }
}

/// An optional setting has its wrapped type's schema; absent (or null), it is nil.
extension Optional: SettingValue where Wrapped: SettingValue {
    /// The wrapped type's schema: an optional setting is one that may be absent.
    public static func settingSchema(_ bounds: SettingBounds) -> Schema { Wrapped.settingSchema(bounds) }

    /// The wrapped value as JSON, or `null`.
    public var settingJSON: SettingJSON { map(\.settingJSON) ?? SettingJSON(.null) }

    /// `null` as nil, anything else as the wrapped type decodes it.
    public static func decodeSetting(from decoder: any Decoder) throws -> Wrapped? {
        if try decoder.singleValueContainer().decodeNil() { return nil }
        return try Wrapped.decodeSetting(from: decoder)
    }
}

extension Optional: NumberSetting where Wrapped: NumberSetting {
    /// The wrapped type's bounds.
    public static func bounds(minimum: Wrapped.Bound?, maximum: Wrapped.Bound?,
                              exclusiveMinimum: Wrapped.Bound?, exclusiveMaximum: Wrapped.Bound?) -> SettingBounds {
        Wrapped.bounds(minimum: minimum, maximum: maximum, exclusiveMinimum: exclusiveMinimum, exclusiveMaximum: exclusiveMaximum)
    }
}
extension Optional: TextSetting where Wrapped: TextSetting {}
extension Optional: ListSetting where Wrapped: ListSetting {}
extension Optional: PlainSetting where Wrapped: PlainSetting {}

extension Array: SettingValue, ListSetting where Element: SettingValue {
    /// An array schema of the element's schema (`bounds.each`), with the item counts given.
    public static func settingSchema(_ bounds: SettingBounds) -> Schema {
        .array(of: Element.settingSchema(bounds.each), minItems: bounds.minItems, maxItems: bounds.maxItems,
               uniqueItems: bounds.uniqueItems)
    }

    /// The items as a JSON array.
    public var settingJSON: SettingJSON { SettingJSON(.array(map(\.settingJSON.text))) }

    /// Item by item, so that each item decodes as a setting (an enum's error lists its values).
    public static func decodeSetting(from decoder: any Decoder) throws -> [Element] {
        var container = try decoder.unkeyedContainer()
        var items: [Element] = []
        while !container.isAtEnd {
            items.append(try Element.decodeSetting(from: container.superDecoder()))
        }
        return items
    }
}

/// An enum whose String raw values are the allowed values of a setting (the schema's `enum`):
///
/// ```swift
/// enum Mode: String, SettingEnum { case fast, safe }
/// @Setting(description: "How to run.") var mode: Mode = .safe
/// ```
public protocol SettingEnum: PlainSetting, RawRepresentable, CaseIterable where RawValue == String {}

extension SettingEnum {
    /// A string schema whose `enum` is the raw values of the cases.
    public static func settingSchema(_ bounds: SettingBounds) -> Schema { .string(oneOf: allCases.map(\.rawValue)) }

    /// The raw value as a JSON string.
    public var settingJSON: SettingJSON { SettingJSON(.string(rawValue)) }

    /// A value that is none of the cases is an error that lists them.
    public static func decodeSetting(from decoder: any Decoder) throws -> Self {
        let text = try decoder.singleValueContainer().decode(String.self)
        guard let value = Self(rawValue: text) else {
            let allowed = allCases.map { "\"\($0.rawValue)\"" }.joined(separator: ", ")
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath,
                                                    debugDescription: "expected one of \(allowed), found \"\(text)\""))
        }
        return value
    }
}
