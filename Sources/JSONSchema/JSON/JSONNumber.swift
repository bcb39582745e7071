/// A JSON number, kept exactly.
///
/// Integers that fit an `Int` are stored directly; every other value keeps its decimal digits,
/// so big integers and long decimals never lose precision. Equality is numeric: `1`, `1.0` and
/// `10e-1` are equal and hash alike.
public struct JSONNumber: Hashable, Sendable, CustomStringConvertible {
    enum Storage: Sendable {
        case int(Int)
        case decimal(JSONDecimal)
    }

    let storage: Storage

    /// Creates an integer number.
    public init(_ v: Int) {
        storage = .int(v)
    }

    /// Creates a number from a `Double`. NaN and infinities are kept for comparisons but
    /// serialize as `null`, since JSON cannot express them.
    public init(_ v: Double) {
        guard v.isFinite else {
            storage = .decimal(JSONDecimal(nonFinite: v))
            return
        }
        // Swift prints the shortest text that round-trips, which is also valid JSON.
        storage = .decimal(JSONDecimal.parse(v.description))
    }

    /// Parses the text of a JSON number (RFC 8259 grammar, e.g. `-12.5e3`) exactly.
    /// Returns `nil` when the text is not a valid JSON number.
    public init?(text: String) {
        guard JSONNumber.isValidLexeme(text.utf8) else { return nil }
        self.init(validatedText: text)
    }

    /// Builds a number from text that is already known to follow the JSON number grammar.
    init(validatedText text: String) {
        let utf8 = text.utf8
        if utf8.count <= 18, !utf8.contains(where: { $0 == UInt8(ascii: ".") || $0 | 0x20 == UInt8(ascii: "e") }),
            let value = Int(text), value != 0 || utf8.first != UInt8(ascii: "-")
        {
            storage = .int(value)
        } else {
            storage = .decimal(JSONDecimal.parse(text))
        }
    }

    /// The nearest `Double` (correctly rounded; may be ±∞ for huge values).
    public var doubleValue: Double {
        switch storage {
        case .int(let v): return Double(v)
        case .decimal(let d): return d.double
        }
    }

    /// The exact `Int` value when the number is integral and fits an `Int`, else `nil`.
    public var intValue: Int? {
        switch storage {
        case .int(let v): return v
        case .decimal(let d): return d.exactInt
        }
    }

    /// Whether the number has no fractional part (`1.0` counts, as JSON Schema requires).
    public var isInteger: Bool {
        switch storage {
        case .int: return true
        case .decimal(let d): return d.isInteger
        }
    }

    /// The JSON text of the number (`null` for NaN and infinities).
    public var description: String {
        switch storage {
        case .int(let v): return String(v)
        case .decimal(let d): return d.text ?? "null"
        }
    }

    /// The exact decimal form, used when the integer fast paths do not apply.
    var decimal: JSONDecimal {
        switch storage {
        case .int(let v): return JSONDecimal.from(v)
        case .decimal(let d): return d
        }
    }

    /// Numeric equality: `1 == 1.0`, and big values compare exactly.
    public static func == (lhs: JSONNumber, rhs: JSONNumber) -> Bool {
        if case .int(let a) = lhs.storage, case .int(let b) = rhs.storage { return a == b }
        return lhs.compare(to: rhs) == 0
    }

    /// Hashes consistently with `==` (numerically equal values hash alike).
    public func hash(into hasher: inout Hasher) {
        switch storage {
        case .int(let v):
            hasher.combine(v)
        case .decimal(let d):
            if let v = d.exactInt {
                hasher.combine(v)
            } else if !d.isFinite {
                hasher.combine(d.double)
            } else {
                hasher.combine(d.isNegative)
                hasher.combine(d.exponent)
                hasher.combine(d.digits)
            }
        }
    }

    /// Exact three-way comparison; `nil` when NaN is involved.
    func compare(to other: JSONNumber) -> Int? {
        if case .int(let a) = storage, case .int(let b) = other.storage {
            return a < b ? -1 : (a == b ? 0 : 1)
        }
        let x = doubleValue
        let y = other.doubleValue
        if x.isNaN || y.isNaN { return nil }
        // Correct rounding is monotonic, so distinct doubles already order the exact values.
        if x < y { return -1 }
        if x > y { return 1 }
        let a = decimal
        let b = other.decimal
        if !a.isFinite || !b.isFinite {
            if a.isFinite == b.isFinite { return 0 }
            return a.isFinite ? (b.double > 0 ? -1 : 1) : (a.double > 0 ? 1 : -1)
        }
        return JSONDecimal.compare(a, b)
    }

    /// Checks the RFC 8259 number grammar: `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
    static func isValidLexeme(_ bytes: some Collection<UInt8>) -> Bool {
        var i = bytes.startIndex
        let end = bytes.endIndex
        func digit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }
        if i < end, bytes[i] == UInt8(ascii: "-") { i = bytes.index(after: i) }
        guard i < end, digit(bytes[i]) else { return false }
        if bytes[i] == UInt8(ascii: "0") {
            i = bytes.index(after: i)
        } else {
            while i < end, digit(bytes[i]) { i = bytes.index(after: i) }
        }
        if i < end, bytes[i] == UInt8(ascii: ".") {
            i = bytes.index(after: i)
            guard i < end, digit(bytes[i]) else { return false }
            while i < end, digit(bytes[i]) { i = bytes.index(after: i) }
        }
        if i < end, bytes[i] | 0x20 == UInt8(ascii: "e") {
            i = bytes.index(after: i)
            if i < end, bytes[i] == UInt8(ascii: "+") || bytes[i] == UInt8(ascii: "-") { i = bytes.index(after: i) }
            guard i < end, digit(bytes[i]) else { return false }
            while i < end, digit(bytes[i]) { i = bytes.index(after: i) }
        }
        return i == end
    }
}

extension JSONNumber: ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral {
    /// Creates a number from an integer literal.
    public init(integerLiteral value: Int) {
        self.init(value)
    }

    /// Creates a number from a floating-point literal.
    public init(floatLiteral value: Double) {
        self.init(value)
    }
}
