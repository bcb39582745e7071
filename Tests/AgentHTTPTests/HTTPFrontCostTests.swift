@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing
@testable import AgentHTTP
import JSONSchema

/// What the HTTP front's cheaper paths must keep: the `Date` header made on demand, and answers
/// written as bytes that are exactly their JSON text.
@Suite(.ownThreads) struct HTTPFrontCostTests {
    @Test func answersCarryTheCurrentDate() throws {
        let agent = try HTTPAgent()
        defer { _ = agent.run.stop() }
        let before = Int(Date().timeIntervalSince1970)
        let reply = try agent.request("GET", "/api/status")
        let after = Int(Date().timeIntervalSince1970)
        let date = try #require(reply.headers["date"], "\(reply)")
        #expect((before...after).map(HTTPDateHeader.format).contains(date), "Date: \(date)")
    }

    @Test func theDateHeaderIsAnIMFFixdate() {
        #expect(HTTPDateHeader.format(0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDateHeader.format(1_795_496_743) == "Tue, 24 Nov 2026 05:05:43 GMT")
        #expect(HTTPDateHeader.format(951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
    }

    @Test func snapshotAnswerBytesAreTheSerializedJSON() throws {
        let values: [JSONValue] = [
            .null, true, false, 0, -17, .number(JSONNumber(12.5)), .number(JSONNumber(1e300)), .number(JSONNumber(0.001)),
            "", "plain", "quote \" backslash \\ slash /", "lines\n\r\t\u{08}\u{0C} and \u{01}\u{1F}\u{7F}",
            "é, 漢字, 🦀", [], [:], [1, "two", [3], ["four": 4]],
            ["ok": true, "processes": [["name": "a\"b", "pid": 12, "cpu_seconds": .number(JSONNumber(0.25))], [:]], "empty": []],
        ]
        for value in values {
            #expect(CommandCenter.RenderedAnswer(json: value).bytes == Array(value.serialized().utf8), "\(value.serialized())")
        }
        // A real status answer, parsed from what `status` writes.
        let status = try JSONValue.parse(#"{"ok":true,"pid":4242,"uptime":12.345,"stopping":false,"processes":[{"name":"idle0","state":"running","pid":4250,"restarts":0,"state_seconds":1.5,"last_exit":null,"cpu_seconds":0.01,"rss_bytes":1048576}],"store":{"enabled":false},"outputs":[],"fork_server":{"pid":4243}}"#)
        #expect(CommandCenter.RenderedAnswer(json: status).bytes == Array(status.serialized().utf8))
    }
}
