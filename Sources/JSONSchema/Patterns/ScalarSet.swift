/// A set of Unicode scalars for `SimplePattern` and `PatternProgram`: an ASCII bitmap plus
/// sorted ranges above ASCII, optionally negated.
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
        } else if ranges.count <= 4 {
            found = ranges.contains { $0.contains(v) }
        } else {
            found = ScalarSet.search(ranges, v)
        }
        return found != negated
    }

    /// Binary search in sorted, disjoint ranges.
    private static func search(_ ranges: [ClosedRange<UInt32>], _ v: UInt32) -> Bool {
        var low = 0
        var high = ranges.count
        while low < high {
            let middle = (low + high) / 2
            if ranges[middle].upperBound < v {
                low = middle + 1
            } else if ranges[middle].lowerBound > v {
                high = middle
            } else {
                return true
            }
        }
        return false
    }

    /// The set of the given code point ranges (any order, may overlap). Surrogate code points
    /// may be included; no Swift string contains one, so they never match.
    init(ranges: [ClosedRange<UInt32>]) {
        for range in ScalarSet.normalized(ranges) { insert(range) }
    }

    /// Sorted, merged ranges.
    static func normalized(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var merged: [ClosedRange<UInt32>] = []
        for range in ranges.sorted(by: { $0.lowerBound < $1.lowerBound }) {
            if let last = merged.last, range.lowerBound <= last.upperBound &+ 1 {
                merged[merged.count - 1] = last.lowerBound...max(last.upperBound, range.upperBound)
            } else {
                merged.append(range)
            }
        }
        return merged
    }

    /// Every code point (up to U+10FFFF) that is not in `ranges`.
    static func complement(_ ranges: [ClosedRange<UInt32>]) -> [ClosedRange<UInt32>] {
        var result: [ClosedRange<UInt32>] = []
        var next: UInt32 = 0
        for range in normalized(ranges) {
            if range.lowerBound > next { result.append(next...(range.lowerBound - 1)) }
            next = range.upperBound + 1
        }
        if next <= 0x10FFFF { result.append(next...0x10FFFF) }
        return result
    }

    /// The ranges of a class escape (`d`, `D`, `w`, `W`, `s`, `S`), or `nil` for any other letter.
    static func classEscapeRanges(_ c: Unicode.Scalar) -> [ClosedRange<UInt32>]? {
        switch c {
        case "d": return digitRanges
        case "D": return complement(digitRanges)
        case "w": return wordRanges
        case "W": return complement(wordRanges)
        case "s": return spaceRanges
        case "S": return complement(spaceRanges)
        default: return nil
        }
    }

    /// Whether `scalar` is an ECMA-262 word character (`\w`), for `\b` and `\B`.
    static func isWordCharacter(_ scalar: Unicode.Scalar) -> Bool {
        let v = scalar.value
        return (0x30...0x39).contains(v) || (0x41...0x5A).contains(v) || v == 0x5F || (0x61...0x7A).contains(v)
    }

    private mutating func insert(_ range: ClosedRange<UInt32>) {
        var v = range.lowerBound
        while v <= range.upperBound && v < 128 {
            if v < 64 { low |= 1 << UInt64(v) } else { high |= 1 << UInt64(v - 64) }
            v += 1
        }
        guard range.upperBound >= 128 else { return }
        // `parseClass` sorts and merges once it has them all (for the binary search in
        // `contains`); every other caller inserts sorted, disjoint ranges.
        ranges.append(max(range.lowerBound, 128)...range.upperBound)
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
        // Once, not per insert: a class of many ranges out of order stays O(n log n) to build.
        set.ranges = ScalarSet.normalized(set.ranges)
        return (set, i - scalars.startIndex + 1)
    }
}
