import AgentTestSupport
import Testing
@testable import JSONSchema

/// Serialization, the JSON model types and JSON pointers.
@Suite("Serialization and model", .ownThreads)
struct SerializationTests {
    static let sample = #"{"name":"agent","numbers":[1,-0.5,1e400,0.1,123456789012345678901234567890],"nested":{"z":null,"a":[true,false,{}],"empty":[]},"text":"tab\tquote\"slash\\nl\nctl\u0001é😀"}"#

    @Test func roundTripsExactly() throws {
        let value = try JSONValue.parse(Self.sample)
        let compact = value.serialized()
        #expect(compact == Self.sample)
        #expect(try JSONValue.parse(compact) == value)
        let pretty = value.serialized(pretty: true)
        #expect(try JSONValue.parse(pretty) == value)
        let sorted = value.serialized(sortedKeys: true)
        #expect(try JSONValue.parse(sorted) == value)
    }

    @Test func prettyPrintsWithTwoSpaceIndent() throws {
        let value: JSONValue = ["b": [1, 2], "a": ["x": nil], "c": [], "d": [:]]
        #expect(value.serialized(pretty: true) == """
            {
              "b": [
                1,
                2
              ],
              "a": {
                "x": null
              },
              "c": [],
              "d": {}
            }
            """)
        #expect(value.serialized(sortedKeys: true) == #"{"a":{"x":null},"b":[1,2],"c":[],"d":{}}"#)
    }

    @Test func escapesBetweenRunsOfMultibyteText() {
        let value: JSONValue = .string("é😀\"mid\u{7}\\end😀")
        #expect(value.serialized() == #""é😀\"mid\u0007\\end😀""#)
    }

    /// The scan goes eight bytes at a time: every ASCII byte, at every place in a word and in
    /// the tail, among multibyte text, is escaped exactly as one scalar at a time would be.
    @Test func everyByteIsEscapedWhereverItStands() {
        func reference(_ string: String) -> String {
            var out = "\""
            for scalar in string.unicodeScalars {
                switch scalar {
                case "\"": out += "\\\""
                case "\\": out += "\\\\"
                case "\n": out += "\\n"
                case "\r": out += "\\r"
                case "\t": out += "\\t"
                case "\u{08}": out += "\\b"
                case "\u{0C}": out += "\\f"
                default:
                    if scalar.value < 0x20 {
                        let hex = String(scalar.value, radix: 16, uppercase: true)
                        out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                    } else {
                        out.unicodeScalars.append(scalar)
                    }
                }
            }
            return out + "\""
        }
        for byte in 0..<128 {
            for place in 0..<19 {
                for filler in ["a", "é", "\u{7F}", "\u{80}"] {
                    let text = String(repeating: filler, count: place) + String(UnicodeScalar(UInt8(byte))) + String(repeating: filler, count: 18 - place)
                    let value = JSONValue.string(text)
                    #expect(value.serialized() == reference(text), "byte \(byte) at \(place) among \(filler)")
                    #expect(value.serializedLength(atMost: 1000) == reference(text).utf8.count, "byte \(byte) at \(place) among \(filler)")
                }
            }
        }
    }

    @Test func integersAreWrittenWithEveryDigitAndSign() {
        for value in [0, 7, 9, 10, -1, -9, -10, 42, 1_000_000, Int.max, Int.min, Int.max - 1, Int.min + 1] {
            #expect(JSONValue.number(JSONNumber(value)).serialized() == String(value))
            #expect(JSONValue.number(JSONNumber(value)).serializedLength(atMost: 100) == String(value).utf8.count)
        }
    }

    @Test func serializedLengthIsTheCompactTextsLengthOrNilPastTheLimit() throws {
        let values: [JSONValue] = [try JSONValue.parse(Self.sample), .null, true, false, [], [:], "", "a\u{0}\"\\\n",
                                   ["k\u{1}": [1, [2.5, ["x": "é"]]]], .number(JSONNumber(-1e-7))]
        for value in values {
            let length = value.serialized().utf8.count
            #expect(value.serializedLength(atMost: length) == length, "\(value.serialized())")
            #expect(value.serializedLength(atMost: length + 100) == length, "\(value.serialized())")
            #expect(value.serializedLength(atMost: length - 1) == nil, "\(value.serialized())")
        }
        // A value far past the limit is refused whole, escapes counted in full.
        let large: JSONValue = .array(Array(repeating: .string(String(repeating: "\"", count: 1000)), count: 2_000))
        #expect(large.serializedLength(atMost: 1 << 20) == nil)
        #expect(large.serializedLength(atMost: 10_000_000) == large.serialized().utf8.count)
    }

    @Test func escapesControlCharacters() {
        let value: JSONValue = .string("a\u{0}b\u{1F}c\u{08}\u{0C}\n\r\t\"\\")
        #expect(value.serialized() == #""a\u0000b\u001Fc\b\f\n\r\t\"\\""#)
    }

    @Test func keepsNumberText() throws {
        for text in ["0", "-0", "-1", "1.0", "1E+2", "-0.000001", "3.14159265358979323846264338327950288", "1e-400"] {
            #expect(try JSONValue.parse(text).serialized() == text)
        }
        #expect(JSONValue(floatLiteral: 0.1).serialized() == "0.1")
        #expect(JSONValue.number(JSONNumber(Double.nan)).serialized() == "null")
    }

    @Test func objectKeepsOrderAndComparesWithoutIt() {
        var object = JSONObject()
        object["z"] = 1
        object["a"] = 2
        object["m"] = 3
        #expect(object.keys == ["z", "a", "m"])
        #expect(object.map(\.key) == ["z", "a", "m"])
        object["a"] = nil
        #expect(object.keys == ["z", "m"])
        #expect(object.count == 2)
        let reordered: JSONObject = ["m": 3, "z": 1]
        #expect(object == reordered)
        #expect(object.hashValue == reordered.hashValue)
        #expect(JSONObject().isEmpty)
        #expect(JSONObject([("a", 1), ("a", 2)]).count == 1)
    }

    @Test func largeObjectsStayConsistent() {
        var object = JSONObject()
        for i in 0..<100 { object["k\(i)"] = .number(JSONNumber(i)) }
        object["k50"] = nil
        object["k7"] = "seven"
        #expect(object.count == 99)
        #expect(object["k51"] == 51)
        #expect(object["k7"] == "seven")
        #expect(object["k50"] == nil)
        #expect(object.keys.first == "k0")
    }

    @Test func valueConveniences() {
        let value: JSONValue = ["s": "x", "n": 1.5, "i": 2, "b": true, "a": [1], "o": ["k": nil]]
        #expect(value["s"]?.stringValue == "x")
        #expect(value["n"]?.typeName == "number")
        #expect(value["i"]?.typeName == "integer")
        #expect(value["i"]?.numberValue?.intValue == 2)
        #expect(value["b"]?.boolValue == true)
        #expect(value["a"]?.arrayValue == [1])
        #expect(value["o"]?.objectValue?["k"] == .null)
        #expect(value["missing"] == nil)
        #expect(value.typeName == "object")
        #expect(JSONValue.null.typeName == "null")
    }

    @Test func pointerEscapingAndResolution() throws {
        #expect(JSONPointer.escape("a/b~c") == "a~1b~0c")
        #expect(JSONPointer.unescape("a~1b~0c") == "a/b~c")
        #expect(JSONPointer.unescape("bad~2") == nil)
        let pointer = JSONPointer().appending("processes").appending("a/b").appending(index: 0)
        #expect(pointer.description == "/processes/a~1b/0")
        #expect(JSONPointer("/processes/a~1b/0") == pointer)
        #expect(JSONPointer("no-slash") == nil)

        let document: JSONValue = ["processes": ["a/b": ["first", "second"]], "": ["~": 1]]
        #expect(pointer.resolve(in: document) == "first")
        #expect(document[pointer: JSONPointer("/~1")!] == nil)
        #expect(JSONPointer("/")?.resolve(in: document) == ["~": 1])
        #expect(JSONPointer("//~0")?.resolve(in: document) == 1)
        #expect(JSONPointer("/processes/a~1b/01")?.resolve(in: document) == nil)
        #expect(JSONPointer("")?.resolve(in: document) == document)
        #expect(pointer.parent?.description == "/processes/a~1b")
    }

    /// Found with scripts/fuzz.sh's FuzzCommands: a `/` followed by a combining mark is one
    /// `Character`, so a pointer whose token begins with one was no pointer, or one token short.
    @Test func aPointerTokenMayBeginWithACombiningMark() throws {
        #expect(JSONPointer("/\u{611}t")?.tokens == ["\u{611}t"])
        #expect(JSONPointer("/a/\u{301}b/~1\u{301}")?.tokens == ["a", "\u{301}b", "/\u{301}"])
        let document: JSONValue = ["a": ["\u{301}b": 1]]
        #expect(JSONPointer("/a/\u{301}b")?.resolve(in: document) == 1)
        let validator = try JSONSchemaValidator(schema: ["\u{301}x": ["type": "integer"], "$ref": "#/\u{301}x"])
        #expect(validator.validate(1).isEmpty)
        #expect(!validator.validate("one").isEmpty)
    }
}
