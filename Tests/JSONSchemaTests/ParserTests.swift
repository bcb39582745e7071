import AgentTestSupport
import Testing
@testable import JSONSchema

/// The strict RFC 8259 parser.
@Suite("Parser", .ownThreads)
struct ParserTests {
    func parseError(_ text: String) -> JSONParseError? {
        do {
            _ = try JSONValue.parse(text)
            return nil
        } catch {
            return error
        }
    }

    @Test func parsesAllValueKinds() throws {
        let value = try JSONValue.parse(#" {"a": [1, -2.5e3, true, false, null, "x"], "b": {}} "#)
        #expect(value == ["a": [1, -2500, true, false, nil, "x"], "b": [:]])
        #expect(value["a"]?.arrayValue?.count == 6)
        #expect(value["a"]?[1]?.numberValue?.doubleValue == -2500)
    }

    @Test func reportsLineAndColumn() throws {
        let error = try #require(parseError("{\n  \"a\": 1,\n  \"b\" 2\n}"))
        #expect(error.line == 3)
        #expect(error.column == 7)
        #expect(error.message == "expected ':' after object key, found '2'")
        #expect(error.description == "line 3, column 7: expected ':' after object key, found '2'")

        let member = try #require(parseError(#"{"a": 1 x}"#))
        #expect(member.message == "expected ',' or '}' after object member, found 'x'")
        #expect((member.line, member.column) == (1, 9))

        // Columns count characters, not bytes.
        let unicode = try #require(parseError("[\"é\", ?]"))
        #expect(unicode.column == 7)
    }

    @Test(arguments: [
        ("[1, 2,]", "trailing comma before ']' is not allowed"),
        (#"{"a": 1,}"#, "trailing comma before '}' is not allowed"),
        ("// note\n{}", "comments are not allowed in JSON"),
        (#"{"a": 1 /* c */}"#, "comments are not allowed in JSON"),
        ("012", "leading zeros are not allowed in numbers"),
        ("-", "expected a digit after '-', found end of input"),
        ("1.", "expected a digit after '.', found end of input"),
        ("1e+", "expected a digit in the exponent, found end of input"),
        ("tru", "invalid literal, expected 'true'"),
        ("NaN", "expected a JSON value, found 'N'"),
        ("", "expected a JSON value, found end of input"),
        ("{} {}", "unexpected '{' after the JSON value"),
        ("\"abc", "unterminated string"),
        ("\"a\tb\"", "control character U+0009 must be escaped in strings"),
        (#""\x""#, "invalid escape sequence '\\x' in string"),
        (#""\u12G4""#, "invalid \\u escape: expected 4 hex digits"),
        (#""\ud83d""#, "unpaired high surrogate \\uD83D (a low surrogate \\uDC00-\\uDFFF must follow)"),
        (#""\ude00""#, "unpaired low surrogate \\uDE00"),
        (#"{1: 2}"#, "expected a string for the object key, found '1'"),
    ])
    func rejectsInvalidInput(text: String, message: String) throws {
        let error = try #require(parseError(text), "\(text) should not parse")
        #expect(error.message == message)
    }

    @Test func rejectsExcessiveNesting() throws {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        let error = try #require(parseError(deep))
        #expect(error.message == "maximum nesting depth of 512 exceeded")
        #expect(error.column == 513)
        let fine = String(repeating: "[", count: 500) + String(repeating: "]", count: 500)
        #expect(parseError(fine) == nil)
    }

    @Test func rejectsInvalidUTF8() throws {
        let bytes: [UInt8] = [0x22, 0x61, 0xFF, 0x22]
        #expect(throws: JSONParseError.self) { try JSONValue.parse(bytes) }
    }

    @Test func decodesEscapesIncludingSurrogatePairs() throws {
        let value = try JSONValue.parse(#""\ud83d\ude00 \u00e9 \" \\ \/ \b\f\n\r\t \u0000""#)
        #expect(value == .string("😀 é \" \\ / \u{08}\u{0C}\n\r\t \u{0}"))
        #expect(try JSONValue.parse(#""\uD834\uDD1E""#) == "𝄞")
    }

    @Test func keepsBigNumbersExact() throws {
        let text = "12345678910111213141516171819202122232425262728293031"
        let value = try JSONValue.parse(text)
        let number = try #require(value.numberValue)
        #expect(number.isInteger)
        #expect(number.intValue == nil)
        #expect(value.serialized() == text)
        #expect(value.typeName == "integer")
        #expect(try JSONValue.parse("1" + text) != value)

        let decimal = try JSONValue.parse("972783798187987123879878123.188781371")
        #expect(decimal.serialized() == "972783798187987123879878123.188781371")
        #expect(decimal != (try JSONValue.parse("972783798187987123879878123.18878137")))
        #expect(try JSONValue.parse("18446744073709551615").numberValue?.compare(to: JSONNumber(Int.max)) == 1)
    }

    @Test func numbersCompareNumerically() throws {
        #expect(try JSONValue.parse("1.0") == 1)
        #expect(try JSONValue.parse("10e-1") == 1)
        #expect(try JSONValue.parse("-0") == 0)
        #expect(try JSONValue.parse("1.5").typeName == "number")
        #expect(try JSONValue.parse("2.0").typeName == "integer")
        #expect(JSONNumber(1.0).hashValue == JSONNumber(1).hashValue)
        #expect(JSONNumber(text: "100e-2")?.intValue == 1)
        #expect(JSONNumber(text: "01") == nil)
        #expect(try #require(JSONNumber(text: "0.3")).isMultiple(of: JSONNumber(0.1)))
        #expect(!(try #require(JSONNumber(text: "0.35")).isMultiple(of: JSONNumber(0.1))))
    }

    @Test func refusesARepeatedKeyAtItsMember() throws {
        // The last one used to win: `{"command": "status", "command": "stop"}` stopped the agent.
        let error = try #require(parseError(#"{"command": "status", "command": "stop"}"#))
        #expect(error.message == "the key \"command\" appears twice in one object; keep one of them")
        #expect(error.pointer == "/command")
        #expect((error.line, error.column) == (1, 23))
        let nested = try #require(parseError("{\"a\": [0, {\"b~/\": 1,\n \"b~/\": 2}]}"))
        #expect(nested.pointer == "/a/1/b~0~1")
        #expect((nested.line, nested.column) == (2, 2))
        // The same key in different objects is fine.
        #expect(parseError(#"{"a": {"k": 1}, "b": {"k": 2}, "k": 3}"#) == nil)
        let many = "{" + (0..<40).map { "\"k\($0)\": \($0)" }.joined(separator: ", ") + ", \"k7\": 0}"
        #expect(parseError(many)?.pointer == "/k7")
    }

    @Test func pointsAtTheValueASyntaxErrorIsIn() throws {
        #expect(parseError(#"{"a": [1, tru]}"#)?.pointer == "/a/1")
        #expect(parseError(#"{"a": {"b" 1}}"#)?.pointer == "/a")
        #expect(parseError("[1, 2,]")?.pointer == "")
    }

    @Test func acceptsAnyByteCollection() throws {
        let text = #"{"k": [1, "two"]}"#
        let expected: JSONValue = ["k": [1, "two"]]
        #expect(try JSONValue.parse(Array(text.utf8)) == expected)
        #expect(try JSONValue.parse(Array(text.utf8)[...]) == expected)
        #expect(try JSONValue.parse(text.utf8) == expected)
        // A non-contiguous collection takes the copying path.
        #expect(try JSONValue.parse(text.utf8.lazy.map { $0 }) == expected)
    }

    @Test func stringsCompareByCodePoints() throws {
        let composed = try JSONValue.parse(#""\u00e4""#)
        let decomposed = try JSONValue.parse(#""a\u0308""#)
        #expect(composed != decomposed)
        let object = try JSONValue.parse(#"{"\u00e4": 1, "a\u0308": 2}"#)
        #expect(object.objectValue?.count == 2)
    }
}
