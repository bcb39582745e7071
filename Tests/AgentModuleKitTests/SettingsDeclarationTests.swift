import AgentTestSupport
import Foundation
import Testing
@testable import AgentModuleKit

/// Settings declared once: the schema and the decoding both come from `@Setting` properties.
@Suite(.ownThreads) struct SettingsDeclarationTests {
    enum Mode: String, SettingEnum { case fast, safe }

    struct Rule: SettingsDeclaration, Equatable {
        @Setting(minLength: 1, description: "Field to watch.") var metric: String
        @Setting(description: "Limit.") var above: Double
        @Setting(minimum: 0, description: "Seconds above.") var forSeconds: Double?

        init() {}
        init(metric: String, above: Double, forSeconds: Double? = nil) {
            self.metric = metric
            self.above = above
            self.forSeconds = forSeconds
        }
    }

    struct Limits: SettingsDeclaration, Equatable {
        @Setting(minimum: 0) var low: Int = 1
        @Setting(maximum: 100) var high: Int = 9
    }

    struct Settings: SettingsDeclaration {
        @Setting(minimum: 0.1, description: "Seconds between two samples.") var intervalSeconds: Double = 5
        @Setting("path", minLength: 1, pattern: "^/", description: "Where.") var file: String
        @Setting(description: "How.") var mode: Mode = .safe
        @Setting(description: "Verbose?") var verbose: Bool = false
        @Setting(minItems: 1, uniqueItems: true, each: .string(minLength: 1)) var pairs: [String] = ["ETH/USD"]
        @Setting var limit: Int?
        @Setting(description: "Bounds.") var limits = Limits()
        @Setting var rules: [Rule] = [Rule(metric: "cpu", above: 90, forSeconds: 30), Rule(metric: "disk", above: 95)]
        @Setting var endpoint: URL?
        /// Not a setting: neither decoded nor in the schema.
        var cache: [String] = []
    }

    struct Source: Datasource {
        typealias Settings = SettingsDeclarationTests.Settings
        static let typeName = "source"
        static let description = "A test source."
        init(settings: Settings) {}
        func run(context: ProcessContext) async throws {}
    }

    struct Adapter: LogicAdapter {
        struct Settings: SettingsDeclaration {
            @Setting(minLength: 1, description: "The event type to count.") var eventType: String = "trade"
        }
        static let typeName = "adapter"
        static let description = "A test adapter."
        static let usageExamples: [String] = []
        init(settings: Settings) {}
        func respond(to message: String, context: AdapterContext) async throws -> String { "" }
    }

    /// A type that writes its schema with the builder keeps it, declaration or not.
    struct Builder: Datasource {
        typealias Settings = SettingsDeclarationTests.Settings
        static let typeName = "builder"
        static let description = "A test source with its own schema."
        static var settingsSchema: Schema { .object(["path": .string(minLength: 2)], required: ["path"], additionalProperties: true) }
        init(settings: Settings) {}
        func run(context: ProcessContext) async throws {}
    }

    private func decode(_ json: String) throws -> Settings { try Source.settings(fromJSON: json) }

    private func failure(_ json: String) -> String {
        do {
            _ = try decode(json)
            return "decoded"
        } catch {
            return "\(error)"
        }
    }

    @Test func theSchemaComesFromTheDeclarationInDeclarationOrder() {
        let rule = #"{"type":"object","properties":{"metric":{"type":"string","minLength":1,"description":"Field to watch."},"#
            + #""above":{"type":"number","allOf":[{"minimum":-1.7976931348623157e+308,"maximum":1.7976931348623157e+308}],"description":"Limit."},"#
            + #""for_seconds":{"type":"number","minimum":0,"allOf":[{"maximum":1.7976931348623157e+308}],"description":"Seconds above."}},"#
            + #""required":["metric","above"],"additionalProperties":false}"#
        let expected = #"{"type":"object","properties":{"#
            + #""interval_seconds":{"type":"number","minimum":0.1,"allOf":[{"maximum":1.7976931348623157e+308}],"description":"Seconds between two samples.","default":5},"#
            + #""path":{"type":"string","minLength":1,"pattern":"^/","description":"Where."},"#
            + #""mode":{"type":"string","enum":["fast","safe"],"description":"How.","default":"safe"},"#
            + #""verbose":{"type":"boolean","description":"Verbose?","default":false},"#
            + #""pairs":{"type":"array","items":{"type":"string","minLength":1},"minItems":1,"uniqueItems":true,"default":["ETH/USD"]},"#
            + #""limit":{"type":"integer","allOf":[{"minimum":-9223372036854775808,"maximum":9223372036854775807}]},"#
            + #""limits":{"type":"object","properties":{"low":{"type":"integer","minimum":0,"allOf":[{"maximum":9223372036854775807}],"default":1},"#
            + #""high":{"type":"integer","maximum":100,"allOf":[{"minimum":-9223372036854775808}],"default":9}},"additionalProperties":false,"#
            + #""description":"Bounds.","default":{"low":1,"high":9}},"#
            + #""rules":{"type":"array","items":\#(rule),"default":[{"metric":"cpu","above":90,"for_seconds":30},{"metric":"disk","above":95}]},"#
            + #""endpoint":{"type":"string","format":"uri"}},"#
            + #""required":["path"],"additionalProperties":false}"#
        #expect(Settings.schema.jsonString == expected)
        #expect(Source.settingsSchema.jsonString == expected)
    }

    @Test func theSchemaEqualsTheOneTheBuilderWrites() {
        struct Feed: SettingsDeclaration {
            @Setting(minItems: 1, uniqueItems: true, each: .string(minLength: 1), description: "Trading pairs to simulate.")
            var pairs: [String] = ["ETH/USD", "BTC/USD"]
            @Setting(minimum: 0.001, description: "Seconds between two trades.") var interval: Double = 0.5
            @Setting(description: "Seed of the random generator.") var seed: Int = 42
            @Setting(oneOf: ["a", "b"], description: "A choice.") var choice: String = "a"
            @Setting(exclusiveMinimum: 0, description: "Length of the window.") var window: Double = 60
            @Setting(description: "Type of the events it emits.") var outType: String
        }
        let built = Schema.object([
            "pairs": .array(of: .string(minLength: 1), minItems: 1, uniqueItems: true,
                            default: ["ETH/USD", "BTC/USD"], description: "Trading pairs to simulate."),
            "interval": .number(minimum: 0.001, default: 0.5, description: "Seconds between two trades."),
            "seed": .integer(default: 42, description: "Seed of the random generator."),
            "choice": .string(oneOf: ["a", "b"], default: "a", description: "A choice."),
            "window": .number(exclusiveMinimum: 0, default: 60, description: "Length of the window."),
            "out_type": .string(description: "Type of the events it emits."),
        ], required: ["out_type"])
        #expect(Feed.schema.jsonString == built.jsonString)
    }

    @Test func missingSettingsTakeTheDeclaredDefaults() throws {
        let settings = try decode(#"{"path":"/tmp"}"#)
        #expect(settings.intervalSeconds == 5 && settings.file == "/tmp" && settings.mode == .safe && !settings.verbose)
        #expect(settings.pairs == ["ETH/USD"] && settings.limit == nil && settings.endpoint == nil)
        #expect(settings.limits == Limits())
        #expect(settings.rules == [Rule(metric: "cpu", above: 90, forSeconds: 30), Rule(metric: "disk", above: 95)])
    }

    @Test func givenSettingsAreDecodedFromTheirKeys() throws {
        let settings = try decode(#"""
            {"interval_seconds": 0.5, "path": "/var", "mode": "fast", "verbose": true, "pairs": ["A", "B"], "limit": 7,
             "limits": {"high": 50}, "rules": [{"metric": "mem", "above": 1.5}], "endpoint": "https://example.com/hook"}
            """#)
        #expect(settings.intervalSeconds == 0.5 && settings.file == "/var" && settings.mode == .fast && settings.verbose)
        #expect(settings.pairs == ["A", "B"] && settings.limit == 7)
        #expect(settings.limits.low == 1 && settings.limits.high == 50)
        #expect(settings.rules == [Rule(metric: "mem", above: 1.5)])
        #expect(settings.endpoint == URL(string: "https://example.com/hook"))
    }

    @Test func anOptionalSettingIsNilWhenAbsentOrNull() throws {
        #expect(try decode(#"{"path":"/","limit":null}"#).limit == nil)
        #expect(!Settings.schema.jsonString.contains(#""required":["path","limit"#))
    }

    @Test func aMissingRequiredSettingIsNamed() {
        #expect(failure("{}") == #"/path: missing required setting "path""#)
        #expect(failure(#"{"path":"/","rules":[{"metric":"cpu","above":1},{"metric":"x"}]}"#)
            == #"/rules/1/above: missing required setting "above""#)
    }

    @Test func aWrongTypeIsAnErrorNamingTheKey() {
        #expect(failure(#"{"path":"/","interval_seconds":"fast"}"#) == "/interval_seconds: expected a number, found a string")
        #expect(failure(#"{"path":7}"#).hasPrefix("/path: expected a string, found "))
        #expect(failure(#"{"path":"/","limits":{"low":"one"}}"#) == "/limits/low: expected an integer, found a string")
        #expect(failure(#"{"path":"/","pairs":["a",1]}"#).hasPrefix("/pairs/1: expected a string, found "))
        #expect(failure(#"{"path":"/","endpoint":"not a url"}"#) == #"/endpoint: expected an absolute URL, found "not a url""#)
        #expect(failure(#"{"path":"/","verbose":null}"#) == "/verbose: expected a boolean, found null")
    }

    @Test func anEnumValueThatIsNoCaseListsTheCases() {
        #expect(failure(#"{"path":"/","mode":"slow"}"#) == #"/mode: expected one of "fast", "safe", found "slow""#)
    }

    @Test func keysAreThePropertyNamesInSnakeCase() {
        #expect(SettingKey.snakeCase("intervalSeconds") == "interval_seconds")
        #expect(SettingKey.snakeCase("maxURLLength") == "max_url_length")
        #expect(SettingKey.snakeCase("payload_bytes") == "payload_bytes")
        #expect(SettingKey.snakeCase("load1") == "load1")
        #expect(SettingKey.snakeCase("retryAfter2x") == "retry_after2x")
    }

    @Test func integerBoundsAreInclusive() throws {
        struct Counts: SettingsDeclaration {
            @Setting(exclusiveMinimum: 0, exclusiveMaximum: 10) var count: Int = 1
            @Setting(each: .number(minimum: 0.5, maximum: 9.5)) var others: [Int] = []
        }
        let json = Counts.schema.jsonString
        #expect(json.contains(#""count":{"type":"integer","minimum":1,"maximum":9,"default":1}"#))
        #expect(json.contains(#""others":{"type":"array","items":{"type":"integer","minimum":1,"maximum":9},"default":[]}"#))
    }

    @Test func decodedSettingsAreValues() throws {
        let settings = try decode(#"{"path":"/a"}"#)
        var copy = settings
        copy.file = "/b"
        copy.rules[0].above = 1
        #expect(settings.file == "/a" && copy.file == "/b")
        #expect(settings.rules[0].above == 90 && copy.rules[0].above == 1)
    }

    @Test func anEmptyDeclarationIsAnObjectWithoutProperties() throws {
        struct Empty: SettingsDeclaration {}
        #expect(Empty.schema.jsonString == Schema.object([:]).jsonString)
        _ = try JSONDecoder().decode(Empty.self, from: Data("{}".utf8))
    }

    @Test func aDeclarationDecodesWithAPlainJSONDecoderToo() throws {
        let settings = try JSONDecoder().decode(Settings.self, from: Data(#"{"path":"/x","limits":{"low":3}}"#.utf8))
        #expect(settings.file == "/x" && settings.limits.low == 3 && settings.limits.high == 9)
    }

    @Test func anAdapterGetsItsSchemaAndDecodingFromTheDeclaration() throws {
        #expect(Adapter.settingsSchema.jsonString
            == #"{"type":"object","properties":{"event_type":{"type":"string","minLength":1,"description":"The event type to count.","default":"trade"}},"additionalProperties":false}"#)
        #expect(try Adapter.settings(fromJSON: "{}").eventType == "trade")
        #expect(try Adapter.settings(fromJSON: #"{"event_type":"tick"}"#).eventType == "tick")
        let manifest = ModuleRegistry.manifestJSON(of: Adapter.self).serialized()
        #expect(manifest.contains(#""settings_schema":"# + Adapter.settingsSchema.jsonString))
    }

    @Test func aSchemaWrittenWithTheBuilderStillWins() {
        #expect(Builder.settingsSchema.jsonString != Settings.schema.jsonString)
        #expect(ProcessEntry(Builder.self).manifestJSON().serialized().contains(#""settings_schema":{"type":"object","properties":{"path":{"type":"string","minLength":2}}"#))
        #expect(ProcessEntry(Source.self).manifestJSON().serialized().contains(#""settings_schema":"# + Settings.schema.jsonString))
    }
}
