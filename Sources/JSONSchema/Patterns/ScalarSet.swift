/// A set of Unicode scalars for `SimplePattern`: an ASCII bitmap plus ranges above ASCII,
/// optionally negated.
struct ScalarSet: Sendable {
    private var low: UInt64 = 0
    private var high: UInt64 = 0
    private var ranges: [ClosedRange<UInt32>] = []
    private var negated = false

    init(single scalar: Unicode.Scalar) {
        insert(scalar.value...scalar.value)
    }

    private init() {}

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        let found: Bool
        if v < 64 {
            found = low & (1 << UInt64(v)) != 0
        } else if v < 128 {
            found = high & (1 << UInt64(v - 64)) != 0
        } else {
            found = ranges.contains { $0.contains(v) }
        }
        return found != negated
    }

    private mutating func insert(_ range: ClosedRange<UInt32>) {
        var v = range.lowerBound
        while v <= range.upperBound && v < 128 {
            if v < 64 { low |= 1 << UInt64(v) } else { high |= 1 << UInt64(v - 64) }
            v += 1
        }
        if range.upperBound >= 128 { ranges.append(max(range.lowerBound, 128)...range.upperBound) }
    }

    private mutating func formUnion(_ other: ScalarSet) {
        low |= other.low
        high |= other.high
        ranges += other.ranges
    }

    private static func make(_ ranges: [ClosedRange<UInt32>], negated: Bool = false) -> ScalarSet {
        var set = ScalarSet()
        for range in ranges { set.insert(range) }
        set.negated = negated
        return set
    }

    private static let digitRanges: [ClosedRange<UInt32>] = [0x30...0x39]
    private static let wordRanges: [ClosedRange<UInt32>] = [0x30...0x39, 0x41...0x5A, 0x5F...0x5F, 0x61...0x7A]
    /// ECMA-262 WhiteSpace and LineTerminator.
    private static let spaceRanges: [ClosedRange<UInt32>] = [
        0x09...0x0D, 0x20...0x20, 0xA0...0xA0, 0x1680...0x1680, 0x2000...0x200A, 0x2028...0x2029,
        0x202F...0x202F, 0x205F...0x205F, 0x3000...0x3000, 0xFEFF...0xFEFF,
    ]

    /// `.`: anything but the ECMA-262 line terminators.
    static let notLineTerminator = make([0x0A...0x0A, 0x0D...0x0D, 0x2028...0x2029], negated: true)

    /// The set for `\c` outside a class, or `nil` when the escape is not a plain character
    /// or character-class escape.
    static func escape(_ c: Unicode.Scalar) -> ScalarSet? {
        switch c {
        case "d": return make(digitRanges)
        case "D": return make(digitRanges, negated: true)
        case "w": return make(wordRanges)
        case "W": return make(wordRanges, negated: true)
        case "s": return make(spaceRanges)
        case "S": return make(spaceRanges, negated: true)
        default: return characterEscape(c).map(ScalarSet.init(single:))
        }
    }

    /// The character denoted by a single-character escape (`\n`, `\.`, …).
    private static func characterEscape(_ c: Unicode.Scalar) -> Unicode.Scalar? {
        switch c {
        case "n": return "\n"
        case "r": return "\r"
        case "t": return "\t"
        case "f": return "\u{0C}"
        case "v": return "\u{0B}"
        default: return "^$\\.*+?()[]{}|/-".unicodeScalars.contains(c) ? c : nil
        }
    }

    /// Parses a class starting at `[`; returns the set and the number of scalars consumed, or
    /// `nil` for anything unusual (empty classes, negated escapes inside, `\b`, …).
    static func parseClass(_ scalars: ArraySlice<Unicode.Scalar>) -> (ScalarSet, Int)? {
        var i = scalars.startIndex + 1
        var set = ScalarSet()
        if i < scalars.endIndex, scalars[i] == "^" {
            set.negated = true
            i += 1
        }
        guard i < scalars.endIndex, scalars[i] != "]" else { return nil }
        while i < scalars.endIndex, scalars[i] != "]" {
            var lower: Unicode.Scalar
            if scalars[i] == "\\" {
                guard i + 1 < scalars.endIndex else { return nil }
                let e = scalars[i + 1]
                i += 2
                switch e {
                case "d": set.formUnion(make(digitRanges)); continue
                case "w": set.formUnion(make(wordRanges)); continue
                case "s": set.formUnion(make(spaceRanges)); continue
                default:
                    guard let c = characterEscape(e) else { return nil }
                    lower = c
                }
            } else {
                guard scalars[i] != "[" else { return nil }
                lower = scalars[i]
                i += 1
            }
            var upper = lower
            if i + 1 < scalars.endIndex, scalars[i] == "-", scalars[i + 1] != "]" {
                if scalars[i + 1] == "\\" {
                    guard i + 2 < scalars.endIndex, let c = characterEscape(scalars[i + 2]) else { return nil }
                    upper = c
                    i += 3
                } else {
                    upper = scalars[i + 1]
                    i += 2
                }
                guard lower.value <= upper.value else { return nil }
            }
            set.insert(lower.value...upper.value)
        }
        guard i < scalars.endIndex else { return nil }
        return (set, i - scalars.startIndex + 1)
    }
}
