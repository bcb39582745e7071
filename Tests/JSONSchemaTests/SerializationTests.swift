import Testing
@testable import JSONSchema

/// Serialization, the JSON model types and JSON pointers.
@Suite("Serialization and model")
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
