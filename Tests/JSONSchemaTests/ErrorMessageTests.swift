import AgentTestSupport
import Testing
@testable import JSONSchema

/// Error messages, locations and error collection.
@Suite("Error messages", .ownThreads)
struct ErrorMessageTests {
    static let settingsSchema: JSONValue = [
        "type": "object",
        "required": ["version", "processes"],
        "additionalProperties": false,
        "properties": [
            "version": ["type": "integer", "minimum": 1],
            "processes": [
                "type": "object",
                "additionalProperties": [
                    "type": "object",
                    "required": ["command", "interval"],
                    "additionalProperties": false,
                    "properties": [
                        "command": ["type": "string", "minLength": 1],
                        "interval": ["type": "number", "minimum": 0.1],
                        "restart": ["enum": ["always", "on-failure", "never"]],
                    ],
                ],
            ],
        ],
    ]

    func errors(_ schema: JSONValue, _ instance: JSONValue, formatAssertion: Bool = false) throws -> [ValidationError] {
        let validator = try JSONSchemaValidator(schema: schema, options: .init(formatAssertion: formatAssertion))
        let errors = validator.validate(instance)
        #expect(validator.isValid(instance) == errors.isEmpty, "isValid and validate disagree")
        return errors
    }

    func messages(_ schema: JSONValue, _ instance: JSONValue, formatAssertion: Bool = false) throws -> [String] {
        try errors(schema, instance, formatAssertion: formatAssertion).map(\.description)
    }

    @Test func settingsWithThreeMistakesYieldsThreeErrors() throws {
        let instance: JSONValue = [
            "version": 2,
            "processes": [
                "trades": ["command": "run", "interval": 0.05, "intervall": 5],
                "quotes": ["command": "run", "interval": 1, "restart": "sometimes"],
            ],
        ]
        let found = try errors(Self.settingsSchema, instance)
        #expect(found.count == 3)
        let interval = try #require(found.first { $0.keyword == "minimum" })
        #expect(interval.instanceLocation == "/processes/trades/interval")
        #expect(interval.keywordLocation == "/properties/processes/additionalProperties/properties/interval/minimum")
        #expect(interval.message == "expected a number ≥ 0.1, found 0.05")
        #expect(interval.description == "/processes/trades/interval: expected a number ≥ 0.1, found 0.05")

        let unknown = try #require(found.first { $0.keyword == "additionalProperties" })
        #expect(unknown.instanceLocation == "/processes/trades")
        #expect(unknown.keywordLocation == "/properties/processes/additionalProperties/additionalProperties")
        #expect(unknown.message == #"unknown property "intervall"; did you mean "interval"?"#)

        let restart = try #require(found.first { $0.keyword == "enum" })
        #expect(restart.instanceLocation == "/processes/quotes/restart")
        #expect(restart.message == #"expected one of "always", "on-failure", "never", found "sometimes" (string)"#)
    }

    @Test func typeMismatchMentionsExpectedTypeAndBounds() throws {
        let schema: JSONValue = ["properties": ["interval": ["type": "number", "minimum": 0.1]]]
        #expect(try messages(schema, ["interval": "fast"]) == [#"/interval: expected a number ≥ 0.1, found "fast" (string)"#])
        let nullable: JSONValue = ["type": ["string", "null"]]
        #expect(try messages(nullable, 5) == ["/: expected a string or null, found 5 (integer)"])
    }

    /// A number is shown as a long string is, cut at 40 characters: one of 900,000 digits made
    /// an answer of 900 KB.
    @Test func aLongNumberIsCutInTheMessageLikeALongString() throws {
        let digits = String(repeating: "9", count: 1_000)
        let found = try messages(["type": "string"], try JSONValue.parse(digits))
        #expect(found == ["/: expected a string, found \(String(repeating: "9", count: 40))… (1000 characters) (integer)"], "\(found)")
    }

    @Test func requiredAndDependentRequired() throws {
        let schema: JSONValue = ["required": ["interval", "command"], "dependentRequired": ["a": ["b"]]]
        let found = try errors(schema, ["a": 1])
        #expect(found.map(\.message) == [
            #"missing required property "interval""#,
            #"missing required property "command""#,
            #"property "b" is required when "a" is present"#,
        ])
        #expect(found[2].keywordLocation == "/dependentRequired/a")
        #expect(found[0].instanceLocation == "")
    }

    @Test func unknownPropertyListsAllowedNamesWhenNothingIsClose() throws {
        let schema: JSONValue = ["properties": ["a": true, "b": true, "c": true], "additionalProperties": false]
        #expect(try messages(schema, ["zzz": 1]) == [#"/: unknown property "zzz"; allowed: "a", "b", "c""#])
        #expect(try messages(schema, ["B": 1]) == [#"/: unknown property "B"; did you mean "b"?"#])
    }

    @Test func unevaluatedPropertiesSuggestsNamesFromInPlaceSchemas() throws {
        let schema: JSONValue = [
            "allOf": [["properties": ["timeout": ["type": "integer"]]]],
            "properties": ["name": ["type": "string"]],
            "unevaluatedProperties": false,
        ]
        let found = try errors(schema, ["name": "x", "timout": 3])
        #expect(found.map(\.message) == [#"unknown property "timout"; did you mean "timeout"?"#])
        #expect(found.first?.keywordLocation == "/unevaluatedProperties")
    }

    @Test func enumAndConstSuggestions() throws {
        let schema: JSONValue = ["enum": ["always", "on-failure", "never"]]
        #expect(try messages(schema, "alwys") == [#"/: expected one of "always", "on-failure", "never", found "alwys" (string); did you mean "always"?"#])
        #expect(try messages(["const": "on"], "off") == [#"/: expected "on", found "off" (string)"#])
    }

    @Test func stringArrayAndFormatMessages() throws {
        #expect(try messages(["minLength": 3], "ab") == [#"/: expected a string of at least 3 characters, found "ab" (2 characters)"#])
        #expect(try messages(["pattern": "^[a-z]+$"], "ABC") == [#"/: expected a string matching ^[a-z]+$, found "ABC""#])
        #expect(try messages(["maxItems": 1], [1, 2]) == ["/: expected an array with at most 1 item, found 2 items"])
        #expect(try messages(["uniqueItems": true], [1, 2, 3, 1]) == ["/: expected unique items, but items 0 and 3 are equal (1)"])
        #expect(try messages(["format": "date-time"], "yesterday", formatAssertion: true) == [#"/: expected a date-time, found "yesterday""#])
        #expect(try messages(["format": "date-time"], "yesterday").isEmpty, "format is an annotation by default")
        #expect(try messages(["multipleOf": 0.5], 1.3) == ["/: expected a multiple of 0.5, found 1.3"])
    }

    @Test func containsMessages() throws {
        let schema: JSONValue = ["contains": ["type": "string"], "maxContains": 1]
        #expect(try messages(schema, [1, 2]) == ["/: expected an array containing an item that matches the contains schema, found none among 2 items"])
        #expect(try messages(schema, ["a", 1, "b"]) == ["/: expected at most 1 item matching the contains schema, found 2 (at indexes 0, 2)"])
    }

    @Test func oneOfMatchingSeveralSchemas() throws {
        let schema: JSONValue = ["oneOf": [["type": "integer"], ["minimum": 10], ["type": "number"]]]
        #expect(try messages(schema, 12) == ["/: matched 3 of the oneOf schemas (0, 1, 2); expected exactly one"])
        let two: JSONValue = ["oneOf": [["type": "integer"], ["type": "string"], ["minimum": 10]]]
        #expect(try messages(two, 12) == ["/: matched 2 of the oneOf schemas (0 and 2); expected exactly one"])
    }

    @Test func anyOfWithSimpleBranchesMergesAlternatives() throws {
        let types: JSONValue = ["anyOf": [["type": "string"], ["type": "object"]]]
        #expect(try messages(types, 5) == ["/: expected a string or an object, found 5 (integer)"])
        let constants: JSONValue = ["oneOf": [["const": "fast"], ["const": "slow"]]]
        #expect(try messages(constants, "slwo") == [#"/: expected "fast" or "slow", found "slwo" (string); did you mean "slow"?"#])
    }

    @Test func anyOfReportsTheClosestBranch() throws {
        let schema: JSONValue = [
            "anyOf": [
                ["type": "string"],
                ["type": "object", "required": ["cron"], "properties": ["cron": ["type": "string"]]],
            ],
        ]
        let found = try errors(schema, ["cron": 5])
        #expect(found.count == 2)
        #expect(found[0].keyword == "anyOf")
        #expect(found[0].message.contains("anyOf/1"))
        #expect(found[1].instanceLocation == "/cron")
        #expect(found[1].keywordLocation == "/anyOf/1/properties/cron/type")
        #expect(found[1].message == "expected a string, found 5 (integer)")
    }

    @Test func refErrorsAreReportedInsideTheTarget() throws {
        let schema: JSONValue = [
            "$id": "https://example.com/settings.json",
            "properties": ["limits": ["$ref": "#/$defs/limits"]],
            "$defs": ["limits": ["properties": ["cpu": ["exclusiveMinimum": 0]]]],
        ]
        let found = try errors(schema, ["limits": ["cpu": 0]])
        #expect(found.count == 1)
        #expect(found[0].instanceLocation == "/limits/cpu")
        #expect(found[0].keywordLocation == "/properties/limits/$ref/properties/cpu/exclusiveMinimum")
        #expect(found[0].absoluteKeywordLocation == "https://example.com/settings.json#/$defs/limits/properties/cpu/exclusiveMinimum")
        #expect(found[0].message == "expected a number > 0, found 0")
    }

    @Test func conditionalErrorsComeFromTheChosenBranch() throws {
        let schema: JSONValue = [
            "if": ["properties": ["kind": ["const": "timer"]]],
            "then": ["required": ["interval"]],
            "else": ["required": ["command"]],
        ]
        let timer = try errors(schema, ["kind": "timer"])
        #expect(timer.map(\.keywordLocation) == ["/then/required"])
        let other = try errors(schema, ["kind": "job"])
        #expect(other.map(\.keywordLocation) == ["/else/required"])
        #expect(other.first?.message == #"missing required property "command""#)
    }

    @Test func notAndPropertyNamesAndFalseSchemas() throws {
        #expect(try messages(["not": ["type": "null"]], nil) == ["/: expected anything but null, found null"])
        let names: JSONValue = ["propertyNames": ["pattern": "^[a-z]+$"]]
        #expect(try messages(names, ["Foo": 1]) == [#"/: invalid property name "Foo": expected a string matching ^[a-z]+$, found "Foo""#])
        #expect(try messages(["properties": ["secret": false]], ["secret": 1]) == [#"/secret: property "secret" is not allowed"#])
        #expect(try messages(["prefixItems": [true], "items": false], [1, 2, 3]) == ["/: expected at most 1 item (only prefixItems are allowed), found 3"])
    }

    @Test func longValuesAreTruncated() throws {
        let long = String(repeating: "x", count: 100)
        let message = try #require(try messages(["type": "integer"], .string(long)).first)
        #expect(message == "/: expected an integer, found \"\(String(repeating: "x", count: 40))…\" (string)")
        let big: JSONValue = .array((0..<30).map { JSONValue.number(JSONNumber($0)) })
        #expect(try messages(["type": "object"], big) == ["/: expected an object, found [...] (array of 30 items)"])
        #expect(try messages(["type": "array"], ["a": 1]) == [#"/: expected an array, found {"a":1} (object)"#])
    }

    @Test func instanceLocationsEscapePointerTokens() throws {
        let schema: JSONValue = ["additionalProperties": ["type": "string"]]
        let found = try errors(schema, ["a/b~c": 1])
        #expect(found.first?.instanceLocation == "/a~1b~0c")
    }

    @Test func compileErrorsSayWhereAndWhat() {
        #expect(throws: JSONSchemaCompileError.self) { try JSONSchemaValidator(schema: ["pattern": "(unclosed"]) }
        do {
            _ = try JSONSchemaValidator(schema: ["properties": ["a": ["$ref": "#/$defs/missing"]]])
            Issue.record("expected a compile error")
        } catch {
            #expect(error.schemaLocation == "/properties/a/$ref")
            #expect(error.message.contains("#/$defs/missing"))
        }
        do {
            _ = try JSONSchemaValidator(schema: ["type": "text"])
            Issue.record("expected a compile error")
        } catch {
            #expect(error.schemaLocation == "/type")
        }
    }

    @Test func validatorIsUsableFromManyTasks() async throws {
        let schema: JSONValue = [
            "allOf": [Self.settingsSchema],
            "propertyNames": ["pattern": "^(version|processes|(x-)+[a-z]+)$"],
        ]
        let validator = try JSONSchemaValidator(schema: schema)
        let bad: JSONValue = ["version": 0, "processes": ["a": ["command": "", "interval": 1]], "x-x-ok": 1, "bad key": 2]
        let counts = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<16 {
                group.addTask {
                    var total = 0
                    for _ in 0..<50 { total += validator.validate(bad).count }
                    return total
                }
            }
            var all: [Int] = []
            for await count in group { all.append(count) }
            return all
        }
        // Per validation: minimum, minLength, the unknown "x-x-ok" and "bad key", and the invalid name.
        #expect(counts == Array(repeating: 250, count: 16))
    }
}
