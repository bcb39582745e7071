import JSONSchema

/// Decodes a `Decodable` value straight from a ``JSONValue`` (a command's request as the
/// front parsed it): no second serialisation and parse. A `JSONValue` member is taken as it
/// is (an open field such as a run's `input`).
public struct JSONValueDecoder {
    public init() {}

    /// `value` as a `T`; a mismatch throws `DecodingError` whose coding path is the member's.
    public func decode<T: Decodable>(_ type: T.Type, from value: JSONValue) throws -> T {
        if let value = value as? T { return value }
        return try T(from: ValueDecoder(value: value, codingPath: []))
    }

    /// The JSON pointer of a decoding error's member (`/priority`, `/items/0`).
    public static func pointer(of error: DecodingError) -> String {
        let path: [any CodingKey]
        switch error {
        case .typeMismatch(_, let context), .valueNotFound(_, let context), .dataCorrupted(let context): path = context.codingPath
        case .keyNotFound(let key, let context): path = context.codingPath + [key]
        @unknown default: path = []
        }
        return path.map { "/" + JSONPointer.escape($0.intValue.map(String.init) ?? $0.stringValue) }.joined()
    }
}

private struct IndexKey: CodingKey {
    var stringValue: String
    var intValue: Int?
    init(stringValue: String) { self.stringValue = stringValue }
    init(intValue: Int) {
        stringValue = String(intValue)
        self.intValue = intValue
    }
}

private struct ValueDecoder: Decoder {
    let value: JSONValue
    let codingPath: [any CodingKey]
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        guard case .object(let object) = value else { throw mismatch(JSONObject.self, "an object") }
        return KeyedDecodingContainer(KeyedContainer<Key>(object: object, codingPath: codingPath))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        guard case .array(let array) = value else { throw mismatch([JSONValue].self, "an array") }
        return UnkeyedContainer(array: array, codingPath: codingPath)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer { SingleContainer(value: value, codingPath: codingPath) }

    func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(Describe.article(value))"))
    }

    /// Decodes `type` from `value`: a `JSONValue` as it is, anything else through its `init(from:)`.
    static func decode<T: Decodable>(_ type: T.Type, _ value: JSONValue, at path: [any CodingKey]) throws -> T {
        if T.self == JSONValue.self, let value = value as? T { return value }
        if T.self == JSONObject.self, case .object(let object) = value, let object = object as? T { return object }
        return try T(from: ValueDecoder(value: value, codingPath: path))
    }
}

private struct SingleContainer: SingleValueDecodingContainer {
    let value: JSONValue
    let codingPath: [any CodingKey]

    func decodeNil() -> Bool { value.isNull }
    func decode(_ type: Bool.Type) throws -> Bool {
        guard let bool = value.boolValue else { throw mismatch(type, "true or false") }
        return bool
    }
    func decode(_ type: String.Type) throws -> String {
        guard let string = value.stringValue else { throw mismatch(type, "a string") }
        return string
    }
    /// A number as a `Double`, refused when the conversion would lose it: ±∞ for a huge one,
    /// 0 for a tiny one that is not 0 (`1e-999999` would pass `exclusiveMinimum: 0` and run as 0).
    func decode(_ type: Double.Type) throws -> Double {
        guard let number = value.numberValue else { throw mismatch(type, "a number") }
        let double = number.doubleValue
        if !double.isFinite { throw outOfRange(type, "a number from -1.7e308 to 1.7e308") }
        if double == 0, number != JSONNumber(0) { throw outOfRange(type, "a number of magnitude at least 5e-324 (a smaller one reads as 0)") }
        return double
    }
    func decode(_ type: Float.Type) throws -> Float { Float(try decode(Double.self)) }
    func decode(_ type: Int.Type) throws -> Int {
        guard let number = value.numberValue, let int = number.intValue else {
            // A whole number past Int's range is not "not a whole number": name the range.
            if value.numberValue?.isInteger == true { throw outOfRange(type, "a whole number from \(Int.min) to \(Int.max)") }
            throw mismatch(type, "a whole number")
        }
        return int
    }
    func decode(_ type: Int8.Type) throws -> Int8 { try exactly(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try exactly(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try exactly(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try exactly(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try exactly(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try exactly(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try exactly(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try exactly(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try exactly(type) }
    func decode<T: Decodable>(_ type: T.Type) throws -> T { try ValueDecoder.decode(type, value, at: codingPath) }

    private func exactly<T: FixedWidthInteger>(_ type: T.Type) throws -> T {
        guard let number = value.numberValue, number.isInteger else { throw mismatch(type, "a whole number") }
        guard let int = number.intValue.flatMap(T.init(exactly:)) else {
            // Read through Int: UInt64's upper half is out of reach too.
            let lowest = T.min < 0 ? Int(T.min) : 0
            let highest = T.bitWidth < Int.bitWidth ? Int(T.max) : Int.max
            throw outOfRange(type, "a whole number from \(lowest) to \(highest)")
        }
        return int
    }

    private func mismatch(_ type: Any.Type, _ expected: String) -> DecodingError {
        .typeMismatch(type, .init(codingPath: codingPath, debugDescription: "expected \(expected), found \(Describe.article(value))"))
    }

    /// A number of the right kind but out of the type's range: the message names the range and
    /// shows the number.
    private func outOfRange(_ type: Any.Type, _ expected: String) -> DecodingError {
        .dataCorrupted(.init(codingPath: codingPath, debugDescription: "expected \(expected), found \(Describe.value(value))"))
    }
}

private struct KeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let object: JSONObject
    let codingPath: [any CodingKey]

    var allKeys: [Key] { object.keys.compactMap(Key.init(stringValue:)) }
    func contains(_ key: Key) -> Bool { object[key.stringValue] != nil }

    private func value(_ key: Key) throws -> JSONValue {
        guard let value = object[key.stringValue] else {
            throw DecodingError.keyNotFound(key, .init(codingPath: codingPath, debugDescription: "\"\(key.stringValue)\" is required"))
        }
        return value
    }

    func decodeNil(forKey key: Key) throws -> Bool { try value(key).isNull }
    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
        try ValueDecoder.decode(type, try value(key), at: codingPath + [key])
    }
    func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T? {
        guard let value = object[key.stringValue], !value.isNull else { return nil }
        return try ValueDecoder.decode(type, value, at: codingPath + [key])
    }
    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try ValueDecoder(value: try value(key), codingPath: codingPath + [key]).container(keyedBy: type)
    }
    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try ValueDecoder(value: try value(key), codingPath: codingPath + [key]).unkeyedContainer()
    }
    func superDecoder() throws -> any Decoder { ValueDecoder(value: .object(object), codingPath: codingPath) }
    func superDecoder(forKey key: Key) throws -> any Decoder { ValueDecoder(value: try value(key), codingPath: codingPath + [key]) }
}

private struct UnkeyedContainer: UnkeyedDecodingContainer {
    let array: [JSONValue]
    let codingPath: [any CodingKey]
    var currentIndex = 0

    init(array: [JSONValue], codingPath: [any CodingKey]) {
        self.array = array
        self.codingPath = codingPath
    }

    var count: Int? { array.count }
    var isAtEnd: Bool { currentIndex >= array.count }

    private mutating func next() throws -> (JSONValue, [any CodingKey]) {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(JSONValue.self, .init(codingPath: codingPath, debugDescription: "the array has only \(array.count) items"))
        }
        defer { currentIndex += 1 }
        return (array[currentIndex], codingPath + [IndexKey(intValue: currentIndex)])
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd, array[currentIndex].isNull else { return false }
        currentIndex += 1
        return true
    }
    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T {
        let (value, path) = try next()
        return try ValueDecoder.decode(type, value, at: path)
    }
    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).container(keyedBy: type)
    }
    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        let (value, path) = try next()
        return try ValueDecoder(value: value, codingPath: path).unkeyedContainer()
    }
    mutating func superDecoder() throws -> any Decoder {
        let (value, path) = try next()
        return ValueDecoder(value: value, codingPath: path)
    }
}
