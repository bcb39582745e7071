import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// A run's input nested so deeply that its record could not be read back (the JSON reader
/// takes 512 levels, the answers wrap the input in a few more) is refused when asked for,
/// so that `task runs` and `task show` keep answering.
@Suite(.ownThreads) struct RunInputNestingTests {
    /// `[[[…0…]]]`: `levels` arrays inside one another.
    static func nested(_ levels: Int) -> String {
        String(repeating: "[", count: levels) + "0" + String(repeating: "]", count: levels)
    }

    @Test func anInputNestedBeyondTheBoundIsRefusedAndTheRunsStayListable() throws {
        let (agent, port) = try TaskAgent.agent()
        defer { _ = agent.stop() }
        let refused = try TaskAgent.http("POST", "/api/tasks/other/run", port: port,
                                              body: #"{"at": "1h", "input": {"deep": \#(Self.nested(508))}}"#)
        #expect(refused.status == 400, "\(refused.body)")
        #expect(refused.json["code"] as? String == "invalid")
        let pointer = try #require(refused.json["pointer"] as? String)
        #expect(pointer == "/input/deep" + String(repeating: "/0", count: InputNesting.deepest - 1))
        let message = refused.json["error"] as? String ?? ""
        #expect(message.contains("more than \(InputNesting.deepest) levels deep"), "\(message)")

        // At the bound: accepted, and listed and shown like any run.
        let accepted = try TaskAgent.http("POST", "/api/tasks/other/run", port: port,
                                               body: #"{"at": "1h", "input": {"deep": \#(Self.nested(InputNesting.deepest - 1))}}"#)
        #expect(accepted.status == 200, "\(accepted.body)")
        let id = try #require((accepted.json["run"] as? [String: Any])?["id"] as? String)
        #expect(TaskFrontTests.waitForCommittedRun(id, status: "queued", in: agent.directory))
        let listed = try TaskAgent.http("GET", "/api/runs", port: port)
        #expect(listed.status == 200, "\(listed.body)")
        #expect((listed.json["runs"] as? [[String: Any]])?.count == 1)
        let shown = try TaskAgent.control(agent, ["show", id, "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
    }

    @Test func theBoundCountsArraysAndObjectsAndNamesTheFirstValueBeyondIt() throws {
        let atBound = try JSONValue.parse(Array(Self.nested(3).utf8))
        #expect(InputNesting.problem(atBound, limit: 3) == nil)
        let beyond = try JSONValue.parse(Array(#"{"a": [1, {"b~/": [[2]]}]}"#.utf8))
        #expect(InputNesting.problem(beyond, limit: 3)?.pointer == "/input/a/1/b~0~1")
    }
}
