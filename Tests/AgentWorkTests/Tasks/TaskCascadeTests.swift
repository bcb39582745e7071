import AgentTestSupport
@testable import AgentWork
import Foundation
import Testing

/// Task runs carry their cascade depth too: two tasks that start each other through their
/// runs' events (a cycle marked intended) stop at ``WorkflowEngine/deepestCascade`` with one
/// log line and a `task.cascade_stopped` event, instead of running without end.
@Suite(.ownThreads) struct TaskCascadeTests {
    @Test func twoTasksStartingEachOtherStopAtTheCascadeDepth() throws {
        let tasks = #"""
            "one": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.succeeded", "cycle": "intended"}},
            "two": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "task.succeeded"}}
            """#
        let (agent, port) = try TaskAgent.agent(tasks: tasks)
        defer { _ = agent.stop() }
        let started = try TaskAgent.http("POST", "/api/tasks/one/run", port: port, body: "{}")
        #expect(started.status == 200, "\(started.body)")

        let line = try #require(agent.waitForLine(onStderr: true, timeout: 120) { $0.contains("trigger cascade stopped") }, "\(agent.transcript)")
        #expect(line.contains("comes \(WorkflowEngine.deepestCascade) runs deep"), "\(line)")
        // The run asked for and one per link up to the limit, all ended.
        let deadline = Date().addingTimeInterval(120)
        var runs: [[String: Any]] = []
        var stored: [[String: Any]] = []
        repeat {
            runs = try TaskAgent.http("GET", "/api/runs?limit=1000", port: port).json["runs"] as? [[String: Any]] ?? []
            stored = try TaskAgent.http("GET", "/api/events?type=task.cascade_stopped", port: port).json["events"] as? [[String: Any]] ?? []
            if runs.count == WorkflowEngine.deepestCascade + 1, runs.allSatisfy({ $0["status"] as? String == "succeeded" }), !stored.isEmpty { break }
            Thread.sleep(forTimeInterval: 0.05)
        } while Date() < deadline
        #expect(runs.count == WorkflowEngine.deepestCascade + 1, "\(runs.count) runs")
        #expect(runs.allSatisfy { $0["status"] as? String == "succeeded" })
        #expect(stored.count == 1, "\(stored)")
        #expect((stored.first?["payload"] as? [String: Any])?["depth"] as? Int == WorkflowEngine.deepestCascade)
        #expect(agent.stderrLines.filter { $0.contains("trigger cascade stopped") }.count == 1)
    }
}
