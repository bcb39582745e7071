/// A parsed ECMA-262 pattern: the regular subset that `PatternProgram` matches in linear time.
/// Captures are not kept (only match or no match is needed), so groups are plain sequences and
/// lazy quantifiers are the same as greedy ones.
indirect enum PatternNode {
    /// One scalar from a set (a literal, `.`, a class or a class escape).
    case set(ScalarSet)
    /// A zero-width assertion.
    case assertion(PatternAssertion)
    /// Nodes in a row (an empty sequence matches the empty string).
    case sequence([PatternNode])
    /// Any one of the nodes.
    case alternation([PatternNode])
    /// `node` repeated `min` to `max` times (`nil`: no upper bound).
    case repetition(PatternNode, min: Int, max: Int?)
}

/// Zero-width assertions of ECMA-262 without flags.
enum PatternAssertion: Sendable {
    /// `^`: the start of the input.
    case start
    /// `$`: the end of the input.
    case end
    /// `\b`: between a word character and a non-word character.
    case wordBoundary
    /// `\B`: not between a word character and a non-word character.
    case notWordBoundary
}

/// Parses an ECMA-262 pattern that `ECMARegexTranslator` has already accepted into a
/// `PatternNode`; throws `NotRegular` for the features no finite automaton can match
/// (backreferences, lookahead, lookbehind) and for Unicode property escapes, which are left to
/// ICU's tables.
struct PatternParser {
    /// The pattern uses a feature that the linear-time matcher does not implement.
    struct NotRegular: Error {
        /// The feature, e.g. "a backreference".
        let feature: String
    }

    private let scalars: [Unicode.Scalar]
    private var i = 0

    /// Parses `pattern`, whose syntax must already have been checked.
    static func parse(_ pattern: String) throws(NotRegular) -> PatternNode {
        var parser = PatternParser(scalars: Array(pattern.unicodeScalars))
        let node = try parser.parseDisjunction()
        guard parser.i == parser.scalars.count else { throw NotRegular(feature: "an unmatched ')'") }
        return node
    }

    private init(scalars: [Unicode.Scalar]) {
        self.scalars = scalars
    }

    private var current: Unicode.Scalar? { i < scalars.count ? scalars[i] : nil }

    private func peek(_ offset: Int) -> Unicode.Scalar? {
        i + offset < scalars.count ? scalars[i + offset] : nil
    }

    // MARK: - Structure

    private mutating func parseDisjunction() throws(NotRegular) -> PatternNode {
        var alternatives = [try parseAlternative()]
        while current == "|" {
            i += 1
            alternatives.append(try parseAlternative())
        }
        return alternatives.count == 1 ? alternatives[0] : .alternation(alternatives)
    }

    private mutating func parseAlternative() throws(NotRegular) -> PatternNode {
        var terms: [PatternNode] = []
        while let c = current, c != "|", c != ")" {
            let atom = try parseAtom()
            terms.append(try parseQuantifier(atom))
        }
        return terms.count == 1 ? terms[0] : .sequence(terms)
    }

    private mutating func parseQuantifier(_ atom: PatternNode) throws(NotRegular) -> PatternNode {
        let bounds: (Int, Int?)
        switch current {
        case "*": bounds = (0, nil); i += 1
        case "+": bounds = (1, nil); i += 1
        case "?": bounds = (0, 1); i += 1
        case "{":
            guard let braces = parseBraces() else { return atom }
            bounds = braces
        default: return atom
        }
        // Lazy and greedy quantifiers accept the same strings.
        if current == "?" { i += 1 }
        return .repetition(atom, min: bounds.0, max: bounds.1)
    }

    /// `{n}`, `{n,}`, `{n,m}`; the translator has checked the bounds.
    private mutating func parseBraces() -> (Int, Int?)? {
        var j = i + 1
        var low = 0
        var sawDigit = false
        while j < scalars.count, let digit = PatternParser.digit(scalars[j]) {
            low = min(low * 10 + digit, ECMARegexTranslator.maxNumber)
            sawDigit = true
            j += 1
        }
        guard sawDigit, j < scalars.count else { return nil }
        var high: Int? = low
        if scalars[j] == "," {
            j += 1
            var value: Int?
            while j < scalars.count, let digit = PatternParser.digit(scalars[j]) {
                value = min((value ?? 0) * 10 + digit, ECMARegexTranslator.maxNumber)
                j += 1
            }
            high = value
        }
        guard j < scalars.count, scalars[j] == "}" else { return nil }
        i = j + 1
        return (low, high)
    }

    private static func digit(_ s: Unicode.Scalar) -> Int? {
        ("0"..."9").contains(s) ? Int(s.value - 48) : nil
    }

    private mutating func parseAtom() throws(NotRegular) -> PatternNode {
        let c = scalars[i]
        switch c {
        case "(": return try parseGroup()
        case "[": return .set(try parseClass())
        case ".": i += 1; return .set(.notLineTerminator)
        case "^": i += 1; return .assertion(.start)
        case "$": i += 1; return .assertion(.end)
        case "\\": return try parseAtomEscape()
        default: i += 1; return .set(ScalarSet(single: c))
        }
    }

    private mutating func parseGroup() throws(NotRegular) -> PatternNode {
        i += 1
        if current == "?" {
            switch peek(1) {
            case ":":
                i += 2
            case "<" where peek(2) != "=" && peek(2) != "!":
                // A named group: skip the name.
                while let c = current, c != ">" { i += 1 }
                i += 1
            default:
                throw NotRegular(feature: "a lookahead or lookbehind")
            }
        }
        let inner = try parseDisjunction()
        guard current == ")" else { throw NotRegular(feature: "a missing ')'") }
        i += 1
        return inner
    }

    // MARK: - Escapes and classes

    private mutating func parseAtomEscape() throws(NotRegular) -> PatternNode {
        i += 1
        guard let c = current else { throw NotRegular(feature: "a trailing '\\'") }
        switch c {
        case "b": i += 1; return .assertion(.wordBoundary)
        case "B": i += 1; return .assertion(.notWordBoundary)
        case "k", "1"..."9": throw NotRegular(feature: "a backreference")
        default:
            if let ranges = ScalarSet.classEscapeRanges(c) {
                i += 1
                return .set(ScalarSet(ranges: ranges))
            }
            let value = try parseCharacterEscape()
            return .set(ScalarSet(ranges: [value...value]))
        }
    }

    /// A class; negated classes are complemented here, so the set is never negated.
    private mutating func parseClass() throws(NotRegular) -> ScalarSet {
        i += 1
        var negated = false
        if current == "^" {
            negated = true
            i += 1
        }
        var ranges: [ClosedRange<UInt32>] = []
        while current != nil, current != "]" {
            let lower = try parseClassAtom()
            guard case .single(let low) = lower, current == "-", let next = peek(1), next != "]" else {
                ranges += lower.ranges
                continue
            }
            i += 1
            let upper = try parseClassAtom()
            guard case .single(let high) = upper, low <= high else {
                // `[\d-x]`: the dash is a literal (what the ICU translation does too).
                ranges += lower.ranges + [45...45] + upper.ranges
                continue
            }
            ranges.append(low...high)
        }
        i += 1
        return ScalarSet(ranges: negated ? ScalarSet.complement(ranges) : ranges)
    }

    private enum ClassAtom {
        case single(UInt32)
        case escape([ClosedRange<UInt32>])

        var ranges: [ClosedRange<UInt32>] {
            switch self {
            case .single(let value): return [value...value]
            case .escape(let ranges): return ranges
            }
        }
    }

    private mutating func parseClassAtom() throws(NotRegular) -> ClassAtom {
        let c = scalars[i]
        guard c == "\\" else {
            i += 1
            return .single(c.value)
        }
        i += 1
        guard let e = current else { throw NotRegular(feature: "a trailing '\\'") }
        if let ranges = ScalarSet.classEscapeRanges(e) {
            i += 1
            return .escape(ranges)
        }
        switch e {
        case "b": i += 1; return .single(0x08)
        case "-": i += 1; return .single(0x2D)
        default: return .single(try parseCharacterEscape())
        }
    }

    /// An escape denoting one character, with `i` at the letter after `\`; returns its code
    /// point (a lone surrogate stays a surrogate, which matches nothing).
    private mutating func parseCharacterEscape() throws(NotRegular) -> UInt32 {
        let c = scalars[i]
        i += 1
        switch c {
        case "f": return 0x0C
        case "n": return 0x0A
        case "r": return 0x0D
        case "t": return 0x09
        case "v": return 0x0B
        case "0": return 0
        case "c":
            let letter = scalars[i]
            i += 1
            return letter.value & 31
        case "x":
            let value = hex(i, count: 2) ?? 0
            i += 2
            return value
        case "u": return parseUnicodeEscape()
        case "p", "P": throw NotRegular(feature: "a Unicode property escape")
        default: return c.value
        }
    }

    /// `\u{…}`, `\uHHHH` or a `\uHHHH\uHHHH` surrogate pair, with `i` after the `u`.
    private mutating func parseUnicodeEscape() -> UInt32 {
        if current == "{" {
            var value: UInt32 = 0
            i += 1
            while let c = current, c != "}" {
                value = min(value &* 16 &+ (PatternParser.hexDigit(c) ?? 0), 0x10FFFF)
                i += 1
            }
            i += 1
            return value
        }
        let value = hex(i, count: 4) ?? 0
        i += 4
        if (0xD800...0xDBFF).contains(value), current == "\\", peek(1) == "u", let low = hex(i + 2, count: 4),
            (0xDC00...0xDFFF).contains(low)
        {
            i += 6
            return 0x10000 + ((value - 0xD800) << 10) + (low - 0xDC00)
        }
        return value
    }

    private func hex(_ position: Int, count: Int) -> UInt32? {
        guard position + count <= scalars.count else { return nil }
        var value: UInt32 = 0
        for s in scalars[position..<(position + count)] {
            guard let digit = PatternParser.hexDigit(s) else { return nil }
            value = value * 16 + digit
        }
        return value
    }

    private static func hexDigit(_ s: Unicode.Scalar) -> UInt32? {
        switch s {
        case "0"..."9": return s.value - 48
        case "a"..."f": return s.value - 87
        case "A"..."F": return s.value - 55
        default: return nil
        }
    }
}
