/// The JSON Schema primitive types as a bit set.
struct JSONTypeSet: OptionSet, Hashable, Sendable {
    let rawValue: UInt8

    static let null = JSONTypeSet(rawValue: 1 << 0)
    static let boolean = JSONTypeSet(rawValue: 1 << 1)
    static let integer = JSONTypeSet(rawValue: 1 << 2)
    static let number = JSONTypeSet(rawValue: 1 << 3)
    static let string = JSONTypeSet(rawValue: 1 << 4)
    static let array = JSONTypeSet(rawValue: 1 << 5)
    static let object = JSONTypeSet(rawValue: 1 << 6)

    /// Names in the order used in messages.
    static let named: [(String, JSONTypeSet)] = [
        ("object", .object), ("array", .array), ("string", .string), ("number", .number),
        ("integer", .integer), ("boolean", .boolean), ("null", .null),
    ]

    init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    init?(name: String) {
        guard let match = JSONTypeSet.named.first(where: { $0.0 == name }) else { return nil }
        self = match.1
    }

    /// Whether `value` is of one of the types in the set (`integer` matches integral numbers,
    /// `number` matches all numbers).
    func matches(_ value: JSONValue) -> Bool {
        switch value {
        case .null: return contains(.null)
        case .bool: return contains(.boolean)
        case .number(let n): return contains(.number) || (contains(.integer) && n.isInteger)
        case .string: return contains(.string)
        case .array: return contains(.array)
        case .object: return contains(.object)
        }
    }
}
