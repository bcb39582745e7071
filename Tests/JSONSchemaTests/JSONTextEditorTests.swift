import AgentTestSupport
import Testing
@testable import JSONSchema

/// Editing JSON text in place: what an edit does not touch stays byte for byte, and what it
/// adds is laid out like its siblings.
@Suite(.ownThreads) struct JSONTextEditorTests {
    static let station: JSONValue = ["type": "weather_source", "interval": 5]

    /// Runs the usual add-a-module edits and checks the result is still the expected JSON.
    private func addModule(_ text: String) throws -> String {
        var editor = try JSONTextEditor(text)
        try editor.append("weather", toArrayAt: "/enabled_modules")
        try editor.setMember("station", to: Self.station, inObjectAt: "/processes")
        var expected = try JSONValue.parse(text)
        if case .object(var object) = expected {
            object["enabled_modules"] = .array((object["enabled_modules"]?.arrayValue ?? []) + ["weather"])
            var processes = object["processes"]?.objectValue ?? [:]
            processes["station"] = Self.station
            object["processes"] = .object(processes)
            expected = .object(object)
        }
        #expect(try JSONValue.parse(editor.text) == expected)
        return editor.text
    }

    @Test func compactFileStaysCompact() throws {
        let edited = try addModule(#"{"enabled_modules":["sample"],"processes":{"trades":{"type":"trade_feed","interval":1.50}}}"#)
        #expect(edited == #"{"enabled_modules":["sample","weather"],"processes":{"trades":{"type":"trade_feed","interval":1.50},"station":{"type":"weather_source","interval":5}}}"#)
    }

    @Test func oneLineFileWithSpacesKeepsItsSpacing() throws {
        let edited = try addModule(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed"}}}"#)
        #expect(edited == #"{"enabled_modules": ["sample", "weather"], "processes": {"trades": {"type": "trade_feed"}, "station": {"type": "weather_source", "interval": 5}}}"#)
    }

    @Test func expandedFileWithTwoSpacesGetsExpandedEntries() throws {
        let text = """
        {
          "enabled_modules": [
            "sample"
          ],
          "processes": {
            "trades": {
              "type": "trade_feed"
            }
          }
        }

        """
        #expect(try addModule(text) == """
        {
          "enabled_modules": [
            "sample",
            "weather"
          ],
          "processes": {
            "trades": {
              "type": "trade_feed"
            },
            "station": {
              "type": "weather_source",
              "interval": 5
            }
          }
        }

        """)
    }

    @Test func fourSpaceFileWithOneLineProcessesGetsAOneLineProcess() throws {
        let text = """
        {
            "enabled_modules": ["system", "sample"],
            "processes": {
                "trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.5},
                "busy":   {"type": "trade_frequency"}
            }
        }
        """
        #expect(try addModule(text) == """
        {
            "enabled_modules": ["system", "sample", "weather"],
            "processes": {
                "trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.5},
                "busy":   {"type": "trade_frequency"},
                "station": {"type": "weather_source", "interval": 5}
            }
        }
        """)
    }

    @Test func tabIndentedFileGetsTabs() throws {
        let text = "{\n\t\"enabled_modules\": [\n\t\t\"sample\"\n\t],\n\t\"processes\": {\n\t\t\"trades\": {\n\t\t\t\"type\": \"trade_feed\"\n\t\t}\n\t}\n}\n"
        #expect(try addModule(text) == "{\n\t\"enabled_modules\": [\n\t\t\"sample\",\n\t\t\"weather\"\n\t],\n\t\"processes\": {\n\t\t\"trades\": {\n\t\t\t\"type\": \"trade_feed\"\n\t\t},\n\t\t\"station\": {\n\t\t\t\"type\": \"weather_source\",\n\t\t\t\"interval\": 5\n\t\t}\n\t}\n}\n")
    }

    @Test func windowsLineEndingsAreKept() throws {
        let text = "{\r\n  \"enabled_modules\": [\r\n    \"sample\"\r\n  ],\r\n  \"processes\": {\r\n    \"trades\": {\r\n      \"type\": \"trade_feed\"\r\n    }\r\n  }\r\n}\r\n"
        let edited = try addModule(text)
        #expect(edited == "{\r\n  \"enabled_modules\": [\r\n    \"sample\",\r\n    \"weather\"\r\n  ],\r\n  \"processes\": {\r\n    \"trades\": {\r\n      \"type\": \"trade_feed\"\r\n    },\r\n    \"station\": {\r\n      \"type\": \"weather_source\",\r\n      \"interval\": 5\r\n    }\r\n  }\r\n}\r\n")
        #expect(!edited.replacingOccurrences(of: "\r\n", with: "").contains("\n"))
    }

    @Test func emptyArraysAndObjectsGainTheirFirstEntry() throws {
        #expect(try addModule(#"{"enabled_modules": [], "processes": {}}"#)
            == #"{"enabled_modules": ["weather"], "processes": {"station": {"type": "weather_source", "interval": 5}}}"#)
        // In an expanded document an empty object's first member goes on a line of its own.
        #expect(try addModule("{\n  \"enabled_modules\": [],\n  \"processes\": {}\n}")
            == "{\n  \"enabled_modules\": [\"weather\"],\n  \"processes\": {\n    \"station\": {\n      \"type\": \"weather_source\",\n      \"interval\": 5\n    }\n  }\n}")
        #expect(try addModule("{\n  \"enabled_modules\": [\n  ],\n  \"processes\": {\n  }\n}")
            == "{\n  \"enabled_modules\": [\n    \"weather\"\n  ],\n  \"processes\": {\n    \"station\": {\n      \"type\": \"weather_source\",\n      \"interval\": 5\n    }\n  }\n}")
    }

    @Test func settingAnExistingMemberReplacesItsValueWhereItStands() throws {
        var editor = try JSONTextEditor("{\n  \"a\": 1,\n  \"b\" : [1,2],\n  \"c\": \"x\"\n}")
        try editor.setMember("b", to: ["x": true], inObjectAt: "")
        try editor.setMember("a", to: "one", inObjectAt: "")
        #expect(editor.text == "{\n  \"a\": \"one\",\n  \"b\" : {\"x\": true},\n  \"c\": \"x\"\n}")
        try editor.replaceValue(at: "/b/x", with: false)
        #expect(editor.text == "{\n  \"a\": \"one\",\n  \"b\" : {\"x\": false},\n  \"c\": \"x\"\n}")
    }

    @Test func newMemberKeepsTheObjectsColonStyleAndEscapesItsKey() throws {
        var editor = try JSONTextEditor(#"{"a" : 1}"#)
        try editor.setMember("quote\"d/key", to: 2, inObjectAt: "")
        #expect(editor.text == #"{"a" : 1, "quote\"d/key" : 2}"#)
        try editor.setMember("x", to: 3, inObjectAt: "")
        #expect(try JSONValue.parse(editor.text)["x"] == 3)
    }

    @Test func removingMembersAndItemsTakesTheirCommasAndKeepsTheRest() throws {
        var editor = try JSONTextEditor("{\n  \"a\": 1,\n  \"b\": 2,\n  \"c\": 3\n}\n")
        try editor.removeMember("b", fromObjectAt: "")
        #expect(editor.text == "{\n  \"a\": 1,\n  \"c\": 3\n}\n")
        try editor.removeMember("c", fromObjectAt: "")
        #expect(editor.text == "{\n  \"a\": 1\n}\n")
        try editor.removeMember("a", fromObjectAt: "")
        #expect(editor.text == "{}\n")
        var list = try JSONTextEditor(#"{"m": ["x", "y", "z"]}"#)
        try list.removeItem(at: 0, fromArrayAt: "/m")
        #expect(list.text == #"{"m": ["y", "z"]}"#)
        try list.removeItem(at: 1, fromArrayAt: "/m")
        #expect(list.text == #"{"m": ["y"]}"#)
        try list.append("w", toArrayAt: "/m")
        #expect(list.text == #"{"m": ["y", "w"]}"#)
    }

    @Test func editsAimedAtTheWrongPlaceAreClearErrors() throws {
        var editor = try JSONTextEditor(#"{"enabled_modules": "sample", "processes": {"a": 1}}"#)
        #expect(throws: JSONEditError(code: "not_an_array", pointer: "/enabled_modules", message: #"expected an array, found "sample""#)) {
            try editor.append("x", toArrayAt: "/enabled_modules")
        }
        #expect(throws: JSONEditError(code: "no_such_value", pointer: "/nope/x", message: #"no value at /nope: the object has no member "nope""#)) {
            try editor.setMember("k", to: 1, inObjectAt: "/nope/x")
        }
        #expect(throws: JSONEditError(code: "no_such_member", pointer: "/processes", message: #"the object has no member "b""#)) {
            try editor.removeMember("b", fromObjectAt: "/processes")
        }
        #expect(throws: JSONParseError.self) { _ = try JSONTextEditor("{\"a\": }") }
        #expect(editor.text == #"{"enabled_modules": "sample", "processes": {"a": 1}}"#)
    }

    @Test func valuesInsideStringsDoNotConfuseTheScanner() throws {
        var editor = try JSONTextEditor(#"{"s": "a, \"b\": [1, {2}]\\", "t": [ "]" , "," ]}"#)
        try editor.append("u", toArrayAt: "/t")
        #expect(editor.text == #"{"s": "a, \"b\": [1, {2}]\\", "t": [ "]" , ",", "u" ]}"#)
    }

    @Test func anItemInsertedAtAnIndexIsLaidOutLikeTheItemItGoesBefore() throws {
        var inline = try JSONTextEditor(#"{"steps": [{"id": "a"}, {"id": "c"}]}"#)
        try inline.insert(["id": "b"], at: 1, intoArrayAt: "/steps")
        try inline.insert(["id": "0"], at: 0, intoArrayAt: "/steps")
        try inline.insert(["id": "d"], at: 4, intoArrayAt: "/steps")
        #expect(inline.text == #"{"steps": [{"id": "0"}, {"id": "a"}, {"id": "b"}, {"id": "c"}, {"id": "d"}]}"#)
        let text = "{\n    \"steps\": [\n        {\"id\": \"a\"},\n        {\"id\": \"c\"}\n    ]\n}\n"
        var expanded = try JSONTextEditor(text)
        try expanded.insert(["id": "b"], at: 1, intoArrayAt: "/steps")
        #expect(expanded.text == "{\n    \"steps\": [\n        {\"id\": \"a\"},\n        {\"id\": \"b\"},\n        {\"id\": \"c\"}\n    ]\n}\n")
        #expect(throws: JSONEditError.self) { try expanded.insert(1, at: 4, intoArrayAt: "/steps") }
        #expect(throws: JSONEditError.self) { try expanded.insert(1, at: -1, intoArrayAt: "/steps") }
    }
}
