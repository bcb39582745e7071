/// Exact decimal representation of a JSON number that does not fit a plain `Int`.
///
/// The value is `(isNegative ? -1 : 1) × digits × 10^exponent`, where `digits` holds decimal
/// digits (0...9) with neither leading nor trailing zeros; zero has no digits. Keeping the
/// digits (rather than only a `Double`) is what makes big integers and long decimals compare,
/// hash and test for `multipleOf` exactly.
final class JSONDecimal: Sendable {
    let isNegative: Bool
    let digits: [UInt8]
    let exponent: Int
    /// Correctly rounded binary approximation, used for fast comparisons.
    let double: Double
    /// JSON text used when serializing; `nil` for values that JSON cannot express (NaN, ±∞).
    let text: String?

    init(isNegative: Bool, digits: [UInt8], exponent: Int, double: Double, text: String?) {
        self.isNegative = isNegative && !digits.isEmpty
        self.digits = digits
        self.exponent = exponent
        self.double = double
        self.text = text
    }

    /// A NaN or infinite value; such values only arise from `JSONNumber(Double)`.
    init(nonFinite value: Double) {
        isNegative = value < 0
        digits = []
        exponent = 0
        double = value
        text = nil
    }

    var isFinite: Bool { text != nil }
    var isZero: Bool { digits.isEmpty && text != nil }

    /// Number of digits before the decimal point of the magnitude (may be ≤ 0 for fractions).
    var magnitudeOrder: Int { digits.count + exponent }

    var isInteger: Bool { isZero || (!digits.isEmpty && exponent >= 0) }

    /// The exact `Int` value when the number is integral and in range.
    var exactInt: Int? {
        guard isInteger else { return nil }
        if isZero { return 0 }
        guard magnitudeOrder <= 19 else { return nil }
        var magnitude: UInt64 = 0
        for d in digits {
            let (m, o1) = magnitude.multipliedReportingOverflow(by: 10)
            let (s, o2) = m.addingReportingOverflow(UInt64(d))
            if o1 || o2 { return nil }
            magnitude = s
        }
        for _ in 0..<exponent {
            let (m, o) = magnitude.multipliedReportingOverflow(by: 10)
            if o { return nil }
            magnitude = m
        }
        if isNegative {
            if magnitude <= UInt64(Int.max) { return -Int(magnitude) }
            return magnitude == UInt64(Int.max) + 1 ? Int.min : nil
        }
        return magnitude <= UInt64(Int.max) ? Int(magnitude) : nil
    }

    /// Parses a JSON number lexeme (already validated by the caller's grammar check).
    static func parse(_ text: String) -> JSONDecimal {
        var digits: [UInt8] = []
        digits.reserveCapacity(text.utf8.count)
        var negative = false
        var fractionDigits = 0
        var explicitExponent = 0
        var inFraction = false
        var iterator = text.utf8.makeIterator()
        var seenDigit = false
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "."): inFraction = true
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                let d = byte &- UInt8(ascii: "0")
                if d != 0 || seenDigit {
                    digits.append(d)
                    seenDigit = true
                }
                if inFraction { fractionDigits += 1 }
            case UInt8(ascii: "e"), UInt8(ascii: "E"):
                explicitExponent = parseExponent(&iterator)
            default:
                break
            }
        }
        var trailing = 0
        while let last = digits.last, last == 0 {
            digits.removeLast()
            trailing += 1
        }
        let exponent = digits.isEmpty ? 0 : explicitExponent &- fractionDigits &+ trailing
        return JSONDecimal(
            isNegative: negative, digits: digits, exponent: exponent,
            double: Double(text) ?? (negative ? -.infinity : .infinity), text: text)
    }

    /// Reads an exponent, saturating absurd values so that arithmetic on it cannot overflow.
    private static func parseExponent(_ iterator: inout String.UTF8View.Iterator) -> Int {
        var negative = false
        var value = 0
        let limit = 1 << 40
        while let byte = iterator.next() {
            switch byte {
            case UInt8(ascii: "-"): negative = true
            case UInt8(ascii: "+"): break
            default:
                if value < limit { value = value * 10 + Int(byte &- UInt8(ascii: "0")) }
            }
        }
        return negative ? -value : value
    }
}

extension JSONDecimal {
    /// Exact three-way comparison of magnitudes (absolute values).
    static func compareMagnitude(_ a: JSONDecimal, _ b: JSONDecimal) -> Int {
        if a.digits.isEmpty || b.digits.isEmpty {
            return (a.digits.isEmpty ? 0 : 1) - (b.digits.isEmpty ? 0 : 1)
        }
        if a.magnitudeOrder != b.magnitudeOrder { return a.magnitudeOrder < b.magnitudeOrder ? -1 : 1 }
        let n = max(a.digits.count, b.digits.count)
        for i in 0..<n {
            let x = i < a.digits.count ? a.digits[i] : 0
            let y = i < b.digits.count ? b.digits[i] : 0
            if x != y { return x < y ? -1 : 1 }
        }
        return 0
    }

    /// Exact three-way comparison of two finite values.
    static func compare(_ a: JSONDecimal, _ b: JSONDecimal) -> Int {
        let signA = a.digits.isEmpty ? 0 : (a.isNegative ? -1 : 1)
        let signB = b.digits.isEmpty ? 0 : (b.isNegative ? -1 : 1)
        if signA != signB { return signA < signB ? -1 : 1 }
        let magnitude = compareMagnitude(a, b)
        return signA < 0 ? -magnitude : magnitude
    }

    /// Builds the exact decimal form of an `Int`.
    static func from(_ value: Int) -> JSONDecimal {
        var magnitude = value.magnitude
        var reversed: [UInt8] = []
        while magnitude > 0 {
            reversed.append(UInt8(magnitude % 10))
            magnitude /= 10
        }
        var exponent = 0
        while let first = reversed.first, first == 0 {
            reversed.removeFirst()
            exponent += 1
        }
        return JSONDecimal(
            isNegative: value < 0, digits: reversed.reversed(), exponent: exponent,
            double: Double(value), text: String(value))
    }
}
