import AgentTestSupport
import Foundation
import Testing
@testable import JSONSchema

/// ECMA-262 patterns: the fast matcher must agree with the general engine.
@Suite("Patterns", .ownThreads)
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
            var budget = PatternBudget()
            #expect(regex.matches(input, budget: &budget) == (expected ? .match : .noMatch), "\(pattern) on \(input.debugDescription)")
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

    /// Numbers in a pattern come from untrusted schemas: one too large for any counter is a
    /// compile error that says which number, never an overflow.
    @Test(arguments: [
        "\\99999999999999999999", "(a)\\99999999999999999999999999999999", "(a)\\100000001",
        "a{99999999999999999999}", "a{1,99999999999999999999}", "a{99999999999999999999,}", "(ab){100000001}",
        "a{5,3}", "\\u{99999999999999999999}", "[\\u{FFFFFFFFFFFFFFFFFFFFFFFF}]",
    ])
    func hugeNumbersInAPatternAreACompileError(pattern: String) {
        #expect(throws: ECMARegexTranslator.InvalidPattern.self) { try ECMARegexTranslator.translate(pattern) }
        #expect(throws: JSONSchemaCompileError.self) { try JSONSchemaValidator(schema: ["pattern": .string(pattern)]) }
        #expect(throws: JSONSchemaCompileError.self) {
            try JSONSchemaValidator(schema: ["patternProperties": .object(JSONObject([(pattern, ["type": "string"])]))])
        }
        // The same text as an instance of format "regex" is simply not a regex.
        let validator = try? JSONSchemaValidator(schema: ["format": "regex"], options: .init(formatAssertion: true))
        #expect(validator?.validate(.string(pattern)).isEmpty == false)
    }

    @Test func largeButSaneBoundsStillCompile() throws {
        _ = try JSONSchemaValidator(schema: ["pattern": "^a{0,100000000}$"])
        _ = try JSONSchemaValidator(schema: ["pattern": "^(a)(b)\\2\\1$"])
    }

    @Test func tooLargeBackreferenceNamesTheNumber() throws {
        let error = #expect(throws: ECMARegexTranslator.InvalidPattern.self) { try ECMARegexTranslator.translate("\\99999999999999999999") }
        #expect(error?.message == "backreference \\99999999999999999999 to a group that does not exist")
    }
}
