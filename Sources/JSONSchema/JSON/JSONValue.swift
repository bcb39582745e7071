/// A JSON document or fragment.
///
/// Numbers are exact (`JSONNumber`) and objects keep their member order (`JSONObject`), so a
/// parsed document serializes back without losing precision or order.
public enum JSONValue: Hashable, Sendable {
    /// The `null` literal.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number, kept exactly.
    case number(JSONNumber)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object with ordered members.
    case object(JSONObject)
}

extension JSONValue {
    /// JSON equality: strings compare code point by code point, numbers numerically, objects
    /// ignoring member order.
    public static func == (lhs: JSONValue, rhs: JSONValue) -> Bool {
        switch (lhs, rhs) {
        case (.null, .null): return true
        case (.bool(let a), .bool(let b)): return a == b
        case (.number(let a), .number(let b)): return a == b
        case (.string(let a), .string(let b)): return a.isExactlyEqual(to: b)
        case (.array(let a), .array(let b)): return a == b
        case (.object(let a), .object(let b)): return a == b
        default: return false
        }
    }

    /// Hashes consistently with `==`.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .null:
            hasher.combine(0)
        case .bool(let b):
            hasher.combine(1)
            hasher.combine(b)
        case .number(let n):
            hasher.combine(2)
            hasher.combine(n)
        case .string(let s):
            hasher.combine(3)
            s.hashExactly(into: &hasher)
        case .array(let a):
            hasher.combine(4)
            hasher.combine(a)
        case .object(let o):
            hasher.combine(5)
            hasher.combine(o)
        }
    }
}

extension JSONValue: ExpressibleByNilLiteral, ExpressibleByBooleanLiteral, ExpressibleByIntegerLiteral,
    ExpressibleByFloatLiteral, ExpressibleByStringLiteral, ExpressibleByArrayLiteral,
    ExpressibleByDictionaryLiteral
{
    /// Creates `null`.
    public init(nilLiteral: ()) {
        self = .null
    }

    /// Creates a boolean.
    public init(booleanLiteral value: Bool) {
        self = .bool(value)
    }

    /// Creates an integer number.
    public init(integerLiteral value: Int) {
        self = .number(JSONNumber(value))
    }

    /// Creates a number from a floating-point literal.
    public init(floatLiteral value: Double) {
        self = .number(JSONNumber(value))
    }

    /// Creates a string.
    public init(stringLiteral value: String) {
        self = .string(value)
    }

    /// Creates an array.
    public init(arrayLiteral elements: JSONValue...) {
        self = .array(elements)
    }

    /// Creates an object, keeping the literal's member order.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(JSONObject(elements))
    }
}
