import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// At run time a chain of workflow runs, each started by an event of the one before, stops at
/// ``WorkflowEngine/deepestCascade`` with one log line and a `workflow.cascade_stopped` event:
/// a cycle marked intended whose `where` never ends it (or one through processes the settings
/// cannot see) ran 1,500 runs a second until a reload before.
@Suite(.ownThreads) struct TriggerCascadeTests {
    @Test func anEndlessIntendedCycleStopsAtTheCascadeDepthWithOneLineAndAnEvent() throws {
        let workflows = #"""
            "workflows": {
              "a": {"on_event": {"type": "order.y", "cycle": "intended"}, "steps": [{"id": "tell", "publish": {"type": "order.x"}}]},
              "b": {"on_event": {"type": "order.x"}, "steps": [{"id": "tell", "publish": {"type": "order.y"}}]}},
            """#
        let (agent, port) = try TaskAgent.agent(tasks: "", store: workflows)
        defer { _ = agent.stop() }
        let started = try TaskAgent.http("POST", "/api/workflows/a/run", port: port, body: "{}")
        #expect(started.status == 200, "\(started.body)")

        let stopped = agent.waitForLine(onStderr: true) { $0.contains("trigger cascade stopped") }
        let line = try #require(stopped, "\(agent.transcript)")
        #expect(line.contains("comes \(WorkflowEngine.deepestCascade) runs deep"), "\(line)")
        // Every run of the chain ends; the one started by hand and one per link up to the limit.
        let deadline = Date().addingTimeInterval(60)
        var runs: [[String: Any]] = []
        repeat {
            runs = try TaskAgent.http("GET", "/api/workflow-runs?limit=1000", port: port).json["runs"] as? [[String: Any]] ?? []
            if runs.count == WorkflowEngine.deepestCascade + 1, runs.allSatisfy({ $0["status"] as? String == "succeeded" }) { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(runs.count == WorkflowEngine.deepestCascade + 1, "\(runs.count) runs")
        #expect(runs.allSatisfy { $0["status"] as? String == "succeeded" }, "\(runs)")
        #expect(agent.stderrLines.filter { $0.contains("trigger cascade stopped") }.count == 1)
        // The event, once the store's writer has committed it.
        var stored: [[String: Any]] = []
        repeat {
            stored = try TaskAgent.http("GET", "/api/events?type=workflow.cascade_stopped", port: port).json["events"] as? [[String: Any]] ?? []
            if stored.isEmpty { Thread.sleep(forTimeInterval: 0.05) }
        } while stored.isEmpty && Date() < deadline
        #expect(stored.count == 1, "\(stored)")
        let stop = try #require(stored.first)
        let payload = stop["payload"] as? [String: Any]
        #expect(payload?["workflow"] as? String == "b" || payload?["workflow"] as? String == "a", "\(stop)")
        #expect(payload?["depth"] as? Int == WorkflowEngine.deepestCascade, "\(stop)")
    }
}
