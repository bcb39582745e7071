import AgentBase
import JSONSchema

/// A decoder that reads nothing: it records which members a `Decodable` type asks for, with
/// `decode` (required) or `decodeIfPresent` (optional), and the JSON type of each — what the
/// type says its request is, to hold against the declared schema.
final class SchemaProbe {
    struct Member: Equatable {
        var required: Bool
        /// `string`, `integer`, `number`, `boolean`, `object`, `array`; nil: any JSON value.
        var type: String?
        /// A `CaseIterable` enum's raw values.
        var values: [String]?
        /// A type of several JSON types (``JSONTypes``): its schema `type`.
        var types: JSONValue?
    }

    private(set) var members: [String: Member] = [:]
    /// The member whose `decodeNil` was just asked: the standard library's `decodeIfPresent`
    /// for `String`, `Int`, `Bool`… asks it, then decodes the value.
    fileprivate var askedForNil: String?

    /// The members `type` decodes.
    static func members<T: Decodable>(of type: T.Type) -> [String: Member] {
        let probe = SchemaProbe()
        // A type that checks its members once decoded (a change's action and the members it
        // needs) refuses the probe's placeholders: what it asked for is recorded by then.
        _ = try? T(from: ProbeDecoder(probe: probe, recording: true))
        return probe.members
    }

    fileprivate func record(_ key: String, required: Bool, type: Any.Type) {
        members[key] = Member(required: required, type: Self.jsonType(type), values: Self.rawValues(type),
                              types: (type as? any JSONTypes.Type)?.jsonTypes)
    }

    static func jsonType(_ type: Any.Type) -> String? {
        switch type {
        case is String.Type: return "string"
        case is Bool.Type: return "boolean"
        case is Double.Type, is Float.Type: return "number"
        case is any BinaryInteger.Type: return "integer"
        case is JSONValue.Type: return nil
        case is any (CaseIterable & RawRepresentable).Type: return "string"
        default:
            let name = String(describing: type)
            return name.hasPrefix("Array<") ? "array" : "object"
        }
    }

    static func rawValues(_ type: Any.Type) -> [String]? {
        guard let enumeration = type as? any (CaseIterable & RawRepresentable).Type else { return nil }
        return values(of: enumeration)
    }

    private static func values<E: CaseIterable & RawRepresentable>(of type: E.Type) -> [String] {
        type.allCases.map { "\($0.rawValue)" }
    }

    /// A value of `type` to hand back (the first case of an enum, zero, empty).
    fileprivate static func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        if let enumeration = type as? any CaseIterable.Type, let first = firstCase(of: enumeration) as? T { return first }
        return try T(from: ProbeDecoder(probe: SchemaProbe(), recording: false))
    }

    private static func firstCase<E: CaseIterable>(of type: E.Type) -> Any? { type.allCases.first }
}

private struct ProbeDecoder: Decoder {
    let probe: SchemaProbe
    let recording: Bool
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(ProbeContainer<Key>(probe: probe, recording: recording))
    }
    func unkeyedContainer() throws -> any UnkeyedDecodingContainer { EmptyList() }
    func singleValueContainer() throws -> any SingleValueDecodingContainer { Single() }
}

private struct ProbeContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let probe: SchemaProbe
    let recording: Bool
    var codingPath: [any CodingKey] { [] }
    var allKeys: [Key] { [] }

    func contains(_ key: Key) -> Bool { true }
    func decodeNil(forKey key: Key) throws -> Bool {
        if recording { probe.askedForNil = key.stringValue }
        return false
    }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        if recording {
            probe.record(key.stringValue, required: probe.askedForNil != key.stringValue, type: type)
            probe.askedForNil = nil
        }
        return try SchemaProbe.placeholder(type)
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        if recording { probe.record(key.stringValue, required: false, type: type) }
        return nil
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        KeyedDecodingContainer(ProbeContainer<NestedKey>(probe: probe, recording: false))
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer { EmptyList() }
    func superDecoder() throws -> any Decoder { ProbeDecoder(probe: probe, recording: false) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ProbeDecoder(probe: probe, recording: false) }
}

private struct EmptyList: UnkeyedDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int? { 0 }
    var isAtEnd: Bool { true }
    var currentIndex: Int { 0 }
    mutating func decodeNil() throws -> Bool { false }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { throw DecodingError.valueNotFound(type, .init(codingPath: [], debugDescription: "empty")) }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: [], debugDescription: "empty"))
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { self }
    mutating func superDecoder() throws -> any Decoder { throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: [], debugDescription: "empty")) }
}

/// A scalar: zero, false, empty.
private struct Single: SingleValueDecodingContainer {
    var codingPath: [any CodingKey] { [] }
    func decodeNil() -> Bool { false }
    func decode(_ type: Bool.Type) throws -> Bool { false }
    func decode(_ type: String.Type) throws -> String { "" }
    func decode(_ type: Double.Type) throws -> Double { 0 }
    func decode(_ type: Float.Type) throws -> Float { 0 }
    func decode(_ type: Int.Type) throws -> Int { 0 }
    func decode(_ type: Int8.Type) throws -> Int8 { 0 }
    func decode(_ type: Int16.Type) throws -> Int16 { 0 }
    func decode(_ type: Int32.Type) throws -> Int32 { 0 }
    func decode(_ type: Int64.Type) throws -> Int64 { 0 }
    func decode(_ type: UInt.Type) throws -> UInt { 0 }
    func decode(_ type: UInt8.Type) throws -> UInt8 { 0 }
    func decode(_ type: UInt16.Type) throws -> UInt16 { 0 }
    func decode(_ type: UInt32.Type) throws -> UInt32 { 0 }
    func decode(_ type: UInt64.Type) throws -> UInt64 { 0 }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try SchemaProbe.placeholder(type) }
}
