import AgentTestSupport
import Foundation
import Testing
@testable import JSONSchema

/// The linear-time matcher must answer as ICU (through `NSRegularExpression`, on the
/// translated pattern) does, on many patterns and inputs generated deterministically.
@Suite("Pattern matchers agree", .ownThreads)
struct PatternDifferentialTests {
    /// A small deterministic generator (SplitMix64), so that every run tests the same cases.
    struct Generator {
        var state: UInt64

        mutating func next(_ bound: Int) -> Int {
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Int((z ^ (z >> 31)) % UInt64(bound))
        }

        mutating func pick(_ choices: [String]) -> String {
            choices[next(choices.count)]
        }
    }

    static let atoms = [
        "a", "b", "c", ".", "[ab]", "[^a]", "[a-c]", "\\d", "\\w", "\\s", "\\W", "[\\d_]", "[^\\s]", "é", "😀", "\\u0062",
        "\\x61", "[]", "[^]", "\\.", "\\n",
    ]
    static let quantifiers = ["", "", "", "*", "+", "?", "{2}", "{1,3}", "{0,}", "*?", "+?", "{0,2}?"]
    static let inputAlphabet: [Unicode.Scalar] = ["a", "a", "b", "c", "1", "_", " ", "\n", ".", "é", "😀"]

    /// A random pattern, and whether it can match the empty string. ICU (unlike ECMA-262 and
    /// the linear matcher) gives up on a quantified group whose body matched empty without
    /// trying a longer body (see `icuDisagreesOnNullableLoops`), so such groups are never
    /// quantified here.
    static func pattern(_ g: inout Generator, depth: Int = 0) -> (String, nullable: Bool) {
        var result = ""
        var nullable = true
        for _ in 0..<(1 + g.next(4)) {
            var term: String
            var termNullable = false
            switch g.next(10) {
            case 0 where depth < 3:
                let inner = pattern(&g, depth: depth + 1)
                (term, termNullable) = ("(" + inner.0 + ")", inner.nullable)
            case 1 where depth < 3:
                let (first, second) = (pattern(&g, depth: depth + 1), pattern(&g, depth: depth + 1))
                (term, termNullable) = ("(?:" + first.0 + "|" + second.0 + ")", first.nullable || second.nullable)
            default: term = g.pick(atoms)
            }
            if !termNullable {
                let quantifier = g.pick(quantifiers)
                term += quantifier
                termNullable = ["*", "?", "{0,", "*?"].contains { quantifier.hasPrefix($0) }
            }
            result += term
            nullable = nullable && termNullable
        }
        switch g.next(8) {
        case 0: result = "^" + result
        case 1: result += "$"
        case 2: result = "^" + result + "$"
        case 3: result = "\\b" + result
        case 4: result += "|" + g.pick(atoms) + "\\B"
        default: break
        }
        return (result, nullable)
    }

    static func input(_ g: inout Generator) -> String {
        var s = String.UnicodeScalarView()
        for _ in 0..<g.next(9) { s.append(inputAlphabet[g.next(inputAlphabet.count)]) }
        return String(s)
    }

    /// ECMA-262's `\\b` and `\\B` look at ASCII word characters, ICU's at Unicode ones (the
    /// linear matcher follows ECMA-262): around them, compare ASCII inputs only.
    static func comparable(_ input: String, _ source: String) -> String {
        guard source.contains("\\b") || source.contains("\\B") else { return input }
        return String(String.UnicodeScalarView(input.unicodeScalars.filter(\.isASCII)))
    }

    static func icuMatches(_ engine: NSRegularExpression, _ input: String) -> Bool {
        engine.firstMatch(in: input, range: NSRange(location: 0, length: input.utf16.count)) != nil
    }

    @Test(arguments: 0..<8)
    func linearMatcherAgreesWithICU(seed: Int) throws {
        var g = Generator(state: UInt64(seed) &* 7919)
        var compared = 0
        for _ in 0..<150 {
            let source = Self.pattern(&g).0
            let engine = try NSRegularExpression(pattern: try ECMARegexTranslator.translate(source))
            let program = try PatternProgram(try PatternParser.parse(source))
            let regex = try PatternRegex(source)
            for _ in 0..<12 {
                let text = Self.comparable(Self.input(&g), source)
                let expected: PatternOutcome = Self.icuMatches(engine, text) ? .match : .noMatch
                var steps = Int.max
                #expect(program.matches(Array(text.unicodeScalars), budget: &steps) == expected, "\(source) on \(text.debugDescription)")
                var budget = PatternBudget()
                #expect(regex.matches(text, budget: &budget) == expected, "\(source) on \(text.debugDescription) (PatternRegex)")
                compared += 1
            }
        }
        #expect(compared == 150 * 12)
    }

    /// Where ICU is wrong: it stops iterating a group once the body matched empty, without
    /// trying a longer body. The expected answers are those of JavaScript (node's `/…/u`),
    /// which the linear matcher follows.
    @Test(arguments: [
        ("\\x61{0,2}?\\x61?[^a]([a-c]*?)*?$", "_a", true),
        ("\\b(?:[\\d_]*\\d{0,}|\\W\\B|^[ab])+?\\w+", "11", true),
        ("(?:b[ab]?$|[^\\s]?)+?b?c{0,}\\w{1,3}", "éé c..😀é", true),
        ("[^\\s]{2}(\\d{0,}[^\\s]{0,2}?a{0,2}?\\.*)*?\\s$", "a.a.acé\n", true),
        ("^(a?)*b$", "aab", true),
        ("^(a?)*b$", "aac", false),
    ])
    func icuDisagreesOnNullableLoops(source: String, input: String, expected: Bool) throws {
        let regex = try PatternRegex(source)
        var budget = PatternBudget()
        #expect(regex.matches(input, budget: &budget) == (expected ? .match : .noMatch))
    }

    /// Hand-picked shapes the generator rarely makes: nested and empty loops, classes with
    /// escapes and ranges, surrogate pairs, word boundaries, bounded repetition of groups.
    @Test(arguments: [
        "^(a*)*$", "(a|)+b", "^(?:a?){3}a{3}$", "()*x", "(a{2,3}){2}", "^[\\w-]+$", "[\\W\\d]", "[a\\-z]", "[\\b]", "\\bab\\b",
        "\\Ba", "^\\uD83D\\uDE00$", "^\\u{1F600}$", "[^\\D]", "[.-9]+", "^$", "a|b|c|", "x*?y", "\\cJ", "\\0", "[\\s\\S]{2}",
        "^(?<year>\\d{4})-(?<m>\\d\\d)$", "(?:ab|a)(?:c|bcd)", "(\\$)\\1?",
    ])
    func handPickedPatternsAgree(source: String) throws {
        let inputs = [
            "", "a", "aa", "aaa", "aaaaaa", "b", "ab", "abcd", "x", "xy", "xxy", "a-z", "-", "\u{08}", "ab ab", " ab", "ba",
            "😀", "😀😀", "5", "A", "\n", "\0", "1999-12", "19999-12", ".-9", "$$", "$",
        ]
        let engine = try NSRegularExpression(pattern: try ECMARegexTranslator.translate(source))
        let regex = try PatternRegex(source)
        for text in inputs.map({ Self.comparable($0, source) }) {
            var budget = PatternBudget()
            let expected: PatternOutcome = Self.icuMatches(engine, text) ? .match : .noMatch
            #expect(regex.matches(text, budget: &budget) == expected, "\(source) on \(text.debugDescription)")
        }
    }
}
