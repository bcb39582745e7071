import AgentTestSupport
import Foundation
import Testing
@testable import AgentModuleKit

@Suite(.ownThreads) struct SchemaTests {
    private func object(_ schema: Schema) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(schema.jsonString.utf8)) as? [String: Any])
    }

    @Test func objectsRejectUnknownPropertiesAndKeepPropertyOrder() throws {
        let schema = Schema.object([
            "pairs": .array(of: .string(minLength: 1), minItems: 1, default: ["ETH/USD"]),
            "interval": .number(minimum: 0.1, default: 0.5, description: "Seconds."),
        ], required: ["pairs"])
        let json = try object(schema)
        #expect(json["type"] as? String == "object")
        #expect(json["additionalProperties"] as? Bool == false)
        #expect(json["required"] as? [String] == ["pairs"])
        let interval = try #require((json["properties"] as? [String: Any])?["interval"] as? [String: Any])
        #expect(interval["minimum"] as? Double == 0.1)
        #expect(interval["default"] as? Double == 0.5)
        #expect(interval["description"] as? String == "Seconds.")
        #expect(schema.jsonString.range(of: "\"pairs\"")!.lowerBound < schema.jsonString.range(of: "\"interval\"")!.lowerBound)
    }

    @Test func openObjectsAndMapsSaySo() throws {
        #expect(try object(.object([:], additionalProperties: true))["additionalProperties"] == nil)
        let map = try object(.map(of: .integer(minimum: 0)))
        #expect((map["additionalProperties"] as? [String: Any])?["minimum"] as? Int == 0)
    }

    /// The bounds of the Swift type, in an `allOf` of their own (where a side is not bounded).
    private func representable(_ json: [String: Any]) -> [String: Any]? {
        (json["allOf"] as? [[String: Any]])?.first
    }

    @Test func integersAreBoundedToIntAndNumbersToFiniteValues() throws {
        let integer = try object(.integer())
        #expect(representable(integer)?["minimum"] as? Int == Int.min && representable(integer)?["maximum"] as? Int == Int.max)
        let bounded = try object(.integer(minimum: 0, maximum: 9))
        #expect(bounded["minimum"] as? Int == 0 && bounded["maximum"] as? Int == 9 && bounded["allOf"] == nil)
        let low = try object(.integer(minimum: 1))
        #expect(representable(low)?["minimum"] == nil && representable(low)?["maximum"] as? Int == Int.max)
        let number = try object(.number())
        #expect(representable(number)?["minimum"] as? Double == -.greatestFiniteMagnitude)
        #expect(representable(number)?["maximum"] as? Double == .greatestFiniteMagnitude)
        let positive = try object(.number(exclusiveMinimum: 0))
        #expect(positive["exclusiveMinimum"] as? Int == 0 && representable(positive)?["minimum"] == nil)
        #expect(representable(positive)?["maximum"] as? Double == .greatestFiniteMagnitude)
        // An infinite bound is no bound (and JSON cannot write it): the finite one replaces it.
        let infinite = try object(.number(maximum: .infinity))
        #expect(infinite["maximum"] == nil && representable(infinite)?["maximum"] as? Double == .greatestFiniteMagnitude)
    }

    @Test func stringsEscapeForJSON() throws {
        let schema = Schema.string(pattern: "^[a-z]+\\d\"$", description: "tab\there")
        let json = try object(schema)
        #expect(json["pattern"] as? String == "^[a-z]+\\d\"$")
        #expect(json["description"] as? String == "tab\there")
    }

    @Test func encodableDefaultsBecomeJSON() throws {
        struct Rule: Codable { var metric: String; var above: Double }
        let schema = Schema.array(of: .object(["metric": .string(), "above": .number()]))
            .defaulting(to: [Rule(metric: "cpu", above: 90)])
        let json = try object(schema)
        let first = try #require((json["default"] as? [[String: Any]])?.first)
        #expect(first["metric"] as? String == "cpu")
        #expect(first["above"] as? Int == 90)
    }
}

@Suite(.ownThreads) struct SettingsDecodingTests {
    struct Settings: Decodable, Equatable {
        struct Limits: Decodable, Equatable { var low: Int; var high: Int }
        var name: String
        var interval: Double
        var limits: Limits
    }

    static let schema = Schema.object([
        "name": .string(),
        "interval": .number(default: 2.5),
        "limits": .object(["low": .integer(default: 1), "high": .integer(default: 9)]),
    ], required: ["name"])

    @Test func missingSettingsTakeTheSchemaDefaultsEvenWhenNested() throws {
        let decoded = try SettingsDecoding.decode(Settings.self, from: Array(#"{"name":"x","limits":{"high":5}}"#.utf8), schema: Self.schema)
        #expect(decoded == Settings(name: "x", interval: 2.5, limits: .init(low: 1, high: 5)))
    }

    @Test func wrongTypeNamesThePointerAndTheExpectedType() {
        #expect {
            _ = try SettingsDecoding.decode(Settings.self, from: Array(#"{"name":"x","interval":"fast"}"#.utf8), schema: Self.schema)
        } throws: { error in
            let text = "\(error)"
            return text.hasPrefix("/interval: expected a number")
        }
    }

    @Test func missingRequiredSettingIsNamed() {
        #expect {
            _ = try SettingsDecoding.decode(Settings.self, from: Array("{}".utf8), schema: Self.schema)
        } throws: { "\($0)" == "/name: missing required setting \"name\"" }
    }

    @Test func settingsThatAreNotJSONAreRefused() {
        #expect { _ = try SettingsDecoding.decode(Settings.self, from: Array("{".utf8), schema: Self.schema) }
            throws: { "\($0)".contains("not valid JSON") }
    }
}
