import JSONSchema

/// Encodes an `Encodable` value (a command's answer) straight to a ``JSONValue``: members in
/// the order the type encodes them, `nil` optionals left out, a `JSONValue` member as it is.
public struct JSONValueEncoder {
    public init() {}

    public func encode<T: Encodable>(_ value: T) throws -> JSONValue {
        if let value = value as? JSONValue { return value }
        let root = Slot()
        try value.encode(to: ValueEncoder(slot: root, codingPath: []))
        return root.value
    }
}

/// One value being built: a leaf, or an object or array whose members are slots of their own.
private final class Slot {
    enum Content { case leaf(JSONValue), object([(String, Slot)]), array([Slot]) }
    var content = Content.leaf(.null)

    var value: JSONValue {
        switch content {
        case .leaf(let value): return value
        case .object(let members): return .object(JSONObject(members.map { ($0.0, $0.1.value) }))
        case .array(let items): return .array(items.map(\.value))
        }
    }

    func member(_ key: String) -> Slot {
        var members: [(String, Slot)] = []
        if case .object(let existing) = content { members = existing }
        if let found = members.first(where: { $0.0 == key }) { return found.1 }
        let slot = Slot()
        members.append((key, slot))
        content = .object(members)
        return slot
    }

    func makeObject() { if case .object = content {} else { content = .object([]) } }

    func append() -> Slot {
        var items: [Slot] = []
        if case .array(let existing) = content { items = existing }
        let slot = Slot()
        items.append(slot)
        content = .array(items)
        return slot
    }

    func makeArray() { if case .array = content {} else { content = .array([]) } }

    var count: Int {
        if case .array(let items) = content { return items.count }
        return 0
    }

    /// `value` into this slot.
    func put<T: Encodable>(_ value: T, at path: [any CodingKey]) throws {
        if let json = value as? JSONValue { content = .leaf(json); return }
        if let object = value as? JSONObject { content = .leaf(.object(object)); return }
        try value.encode(to: ValueEncoder(slot: self, codingPath: path))
    }
}

private struct ValueEncoder: Encoder {
    let slot: Slot
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
        slot.makeObject()
        return KeyedEncodingContainer(KeyedContainer<Key>(slot: slot, codingPath: codingPath))
    }
    func unkeyedContainer() -> any UnkeyedEncodingContainer {
        slot.makeArray()
        return UnkeyedContainer(slot: slot, codingPath: codingPath)
    }
    func singleValueContainer() -> any SingleValueEncodingContainer { SingleContainer(slot: slot, codingPath: codingPath) }
}

private struct SingleContainer: SingleValueEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]

    func encodeNil() { slot.content = .leaf(.null) }
    func encode(_ value: Bool) { slot.content = .leaf(.bool(value)) }
    func encode(_ value: String) { slot.content = .leaf(.string(value)) }
    func encode(_ value: Double) { slot.content = .leaf(.number(JSONNumber(value))) }
    func encode(_ value: Float) { encode(Double(value)) }
    func encode(_ value: Int) { slot.content = .leaf(.number(JSONNumber(value))) }
    func encode<T: Encodable>(_ value: T) throws {
        if let int = value as? any BinaryInteger, let exact = Int(exactly: int) { return encode(exact) }
        try slot.put(value, at: codingPath)
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedEncodingContainerProtocol {
    let slot: Slot
    let codingPath: [any CodingKey]

    func encodeNil(forKey key: Key) { slot.member(key.stringValue).content = .leaf(.null) }
    func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
        try SingleContainer(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).encode(value)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type, forKey key: Key) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).container(keyedBy: keyType)
    }
    func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
        ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]).unkeyedContainer()
    }
    func superEncoder() -> any Encoder { ValueEncoder(slot: slot, codingPath: codingPath) }
    func superEncoder(forKey key: Key) -> any Encoder { ValueEncoder(slot: slot.member(key.stringValue), codingPath: codingPath + [key]) }
}

private struct UnkeyedContainer: UnkeyedEncodingContainer {
    let slot: Slot
    let codingPath: [any CodingKey]
    var count: Int { slot.count }

    func encodeNil() { slot.append().content = .leaf(.null) }
    func encode<T: Encodable>(_ value: T) throws {
        try SingleContainer(slot: slot.append(), codingPath: codingPath).encode(value)
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy keyType: NestedKey.Type) -> KeyedEncodingContainer<NestedKey> {
        ValueEncoder(slot: slot.append(), codingPath: codingPath).container(keyedBy: keyType)
    }
    func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
        ValueEncoder(slot: slot.append(), codingPath: codingPath).unkeyedContainer()
    }
    func superEncoder() -> any Encoder { ValueEncoder(slot: slot.append(), codingPath: codingPath) }
}
