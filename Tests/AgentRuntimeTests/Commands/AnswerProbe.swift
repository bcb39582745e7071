import AgentBase
import JSONSchema

/// An encoder that writes nothing: it records which members an `Encodable` answer writes at
/// its top — with `encode` (always) or `encodeIfPresent` (when it has a value) — and the JSON
/// type of each: what the answer type says it answers, to hold against the declared schema.
/// An answer encoded as one value (``EncodedAnswer``: JSON made by its host) is opaque.
final class AnswerProbe {
    struct Member: Equatable {
        /// Written whatever the answer holds.
        var always: Bool
        /// As ``SchemaProbe/jsonType(_:)`` names it; nil: any JSON value.
        var type: String?
    }

    fileprivate(set) var members: [String: Member] = [:]
    fileprivate(set) var opaque = false

    /// The members `answer` writes at its top; nil when it is opaque.
    static func members<T: Encodable>(of answer: T) throws -> [String: Member]? {
        let probe = AnswerProbe()
        try answer.encode(to: ProbeEncoder(probe: probe, top: true))
        return probe.opaque ? nil : probe.members
    }

    fileprivate func record(_ key: String, always: Bool, type: Any.Type) {
        members[key] = Member(always: always, type: SchemaProbe.jsonType(type))
    }
}

private struct ProbeEncoder: Encoder {
    let probe: AnswerProbe
    /// The answer itself, not a member's value.
    let top: Bool
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        KeyedEncodingContainer(ProbeKeyed<Key>(probe: probe, top: top))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        if top { probe.opaque = true }
        return ProbeList()
    }
    func singleValueContainer() -> any SingleValueEncodingContainer {
        if top { probe.opaque = true }
        return ProbeSingle()
    }
}

private struct ProbeKeyed<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let probe: AnswerProbe
    let top: Bool
    var codingPath: [any CodingKey] { [] }

    private func record<T>(_ key: Key, always: Bool, _ type: T.Type) {
        if top { probe.record(key.stringValue, always: always, type: type) }
    }

    mutating func encodeNil(forKey key: Key) throws { record(key, always: true, JSONValue.self) }
    mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws { record(key, always: true, T.self) }
    mutating func encodeIfPresent<T: Encodable>(_ value: T?, forKey key: Key) throws { record(key, always: false, T.self) }
    mutating func encodeIfPresent(_ value: Bool?, forKey key: Key) throws { record(key, always: false, Bool.self) }
    mutating func encodeIfPresent(_ value: String?, forKey key: Key) throws { record(key, always: false, String.self) }
    mutating func encodeIfPresent(_ value: Double?, forKey key: Key) throws { record(key, always: false, Double.self) }
    mutating func encodeIfPresent(_ value: Float?, forKey key: Key) throws { record(key, always: false, Float.self) }
    mutating func encodeIfPresent(_ value: Int?, forKey key: Key) throws { record(key, always: false, Int.self) }
    mutating func encodeIfPresent(_ value: Int8?, forKey key: Key) throws { record(key, always: false, Int8.self) }
    mutating func encodeIfPresent(_ value: Int16?, forKey key: Key) throws { record(key, always: false, Int16.self) }
    mutating func encodeIfPresent(_ value: Int32?, forKey key: Key) throws { record(key, always: false, Int32.self) }
    mutating func encodeIfPresent(_ value: Int64?, forKey key: Key) throws { record(key, always: false, Int64.self) }
    mutating func encodeIfPresent(_ value: UInt?, forKey key: Key) throws { record(key, always: false, UInt.self) }
    mutating func encodeIfPresent(_ value: UInt8?, forKey key: Key) throws { record(key, always: false, UInt8.self) }
    mutating func encodeIfPresent(_ value: UInt16?, forKey key: Key) throws { record(key, always: false, UInt16.self) }
    mutating func encodeIfPresent(_ value: UInt32?, forKey key: Key) throws { record(key, always: false, UInt32.self) }
    mutating func encodeIfPresent(_ value: UInt64?, forKey key: Key) throws { record(key, always: false, UInt64.self) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        record(key, always: true, JSONObject.self)
        return KeyedEncodingContainer(ProbeKeyed<NestedKey>(probe: probe, top: false))
    }
    mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        record(key, always: true, [JSONValue].self)
        return ProbeList()
    }
    mutating func superEncoder() -> any Encoder { ProbeEncoder(probe: probe, top: false) }
    mutating func superEncoder(forKey key: Key) -> any Encoder { ProbeEncoder(probe: probe, top: false) }
}

private struct ProbeList: UnkeyedEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    var count: Int { 0 }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        KeyedEncodingContainer(ProbeKeyed<NestedKey>(probe: AnswerProbe(), top: false))
    }
    mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer { self }
    mutating func superEncoder() -> any Encoder { ProbeEncoder(probe: AnswerProbe(), top: false) }
}

private struct ProbeSingle: SingleValueEncodingContainer {
    var codingPath: [any CodingKey] { [] }
    mutating func encodeNil() throws {}
    mutating func encode<T: Encodable>(_ value: T) throws {}
    mutating func encode(_ value: Bool) throws {}
    mutating func encode(_ value: String) throws {}
    mutating func encode(_ value: Double) throws {}
    mutating func encode(_ value: Float) throws {}
    mutating func encode(_ value: Int) throws {}
    mutating func encode(_ value: Int8) throws {}
    mutating func encode(_ value: Int16) throws {}
    mutating func encode(_ value: Int32) throws {}
    mutating func encode(_ value: Int64) throws {}
    mutating func encode(_ value: UInt) throws {}
    mutating func encode(_ value: UInt8) throws {}
    mutating func encode(_ value: UInt16) throws {}
    mutating func encode(_ value: UInt32) throws {}
    mutating func encode(_ value: UInt64) throws {}
}
