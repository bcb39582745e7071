import Foundation
import Testing
@testable import JSONSchema

/// ECMA-262 patterns: the fast matcher must agree with the general engine.
@Suite("Patterns")
struct PatternTests {
    static let simplePatterns = [
        "^[a-z][a-z0-9_-]*$", "^\\d{4}-\\d{2}$", "^[a-z]+$", "a.c", "^\\w+@\\w+\\.com$", "[^a-z]", "x{2,}",
        "^[A-Fa-f0-9]{8}$", "\\s", "^-?\\d+(?:x)?$", "^[\\]\\\\]+$", "^.{3,5}$", "é+", "^[à-ÿ]+$", "b?c*d+$", "\\$$",
    ]
    static let inputs = [
        "", "a", "abc", "trades_interval-x", "Trades", "2024-05", "2024-5", "aXc", "a\nc", "user@host.com", "xx", "x",
        "DEADBEEF", "deadbeef0", "tab\there", "ccd", "bd", "ééé", "çà", "]\\", "12$", "abcdef", "a b",
    ]

    @Test(arguments: simplePatterns)
    func fastMatcherAgreesWithRegexEngine(pattern: String) throws {
        let translated = try ECMARegexTranslator.translate(pattern)
        let engine = try NSRegularExpression(pattern: translated)
        let regex = try PatternRegex(pattern)
        for input in Self.inputs {
            let expected = engine.firstMatch(in: input, range: NSRange(location: 0, length: input.utf16.count)) != nil
            #expect(regex.matches(input) == expected, "\(pattern) on \(input.debugDescription)")
        }
    }

    @Test func recognizesSimpleShapes() {
        #expect(SimplePattern("^[a-z][a-z0-9_-]*$") != nil)
        #expect(SimplePattern("^\\d{4}-\\d{2}$") != nil)
        #expect(SimplePattern("^(a|b)$") == nil)
        #expect(SimplePattern("a+?") == nil)
        #expect(SimplePattern("\\p{L}") == nil)
    }

    @Test(arguments: ["(?i)abc", "a**", "[a-", "(?<n>a)\\k<m>", "\\a", "a{1", "(?P<n>x)"])
    func rejectsInvalidECMASyntax(pattern: String) {
        #expect(throws: ECMARegexTranslator.InvalidPattern.self) { try PatternRegex(pattern) }
    }
}
