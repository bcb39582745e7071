import Foundation
import Testing
@testable import AgentRuntime

/// Task events on the bus and `on_event` triggers, with real workers of the `faults` module.
@Suite(.ownThreads) struct TaskEventTests {
    @Test func anEventWhosePayloadPassesTheConditionRunsTheTaskWithTheEventAsInput() throws {
        let (agent, port) = try TaskFrontTests.agent(tasks: #"""
            "on_tick": {"type": "command", "command": ["/bin/true"],
                        "on_event": {"type": "fault_tick", "where": {"properties": {"tick": {"minimum": 3, "maximum": 3}}, "required": ["tick"]}}}
            """#, modules: #"["faults"]"#, processes: #"{"ticker": {"type": "fault", "mode": "healthy", "tick_ms": 20}}"#)
        defer { _ = agent.stop() }
        var runs: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(30)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            runs = try TaskFrontTests.http("GET", "/api/runs?task=on_tick", port: port).json["runs"] as? [[String: Any]] ?? []
        } while runs.isEmpty && Date() < deadline
        // Well past tick 3: still exactly one run.
        Thread.sleep(forTimeInterval: 0.3)
        runs = try TaskFrontTests.http("GET", "/api/runs?task=on_tick", port: port).json["runs"] as? [[String: Any]] ?? []
        #expect(runs.count == 1, "\(runs)\n\(agent.transcript)")
        let run = try #require(runs.first)
        #expect(run["requested_by"] as? String == "event")
        let input = try #require(run["input"] as? [String: Any])
        #expect(input["type"] as? String == "fault_tick")
        #expect(input["source"] as? String == "ticker")
        #expect((input["payload"] as? [String: Any])?["tick"] as? Int == 3)
    }

    @Test func taskEventsReachSubscribedProcessesAndTheStore() throws {
        let (agent, port) = try TaskFrontTests.agent(
            tasks: #""job": {"type": "command", "command": ["/bin/true"]}"#, modules: #"["faults"]"#,
            processes: #"{"echo": {"type": "relay", "out_type": "echoed", "burst": 0, "subscribe": ["task.queued"]}}"#)
        defer { _ = agent.stop() }
        // The relay's worker subscribes once it runs.
        Thread.sleep(forTimeInterval: 1)
        let queued = try TaskFrontTests.http("POST", "/api/tasks/job/run", port: port, body: "{}")
        let id = try #require((queued.json["run"] as? [String: Any])?["id"] as? String, "\(queued.body)")
        let echoed = agent.waitForLine { $0.contains(#""type":"echoed""#) }
        #expect(echoed != nil, "the relay subscribed to task.queued received it and emitted echoed\n\(agent.transcript)")
        let shown = agent.waitForLine { $0.contains(#""source":"tasks""#) && $0.contains(#""type":"task.queued""#) }
        #expect(shown?.contains(id) == true)

        var types: [String] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            let events = try TaskFrontTests.http("GET", "/api/events?source=tasks", port: port).json["events"] as? [[String: Any]] ?? []
            types = events.filter { ($0["payload"] as? [String: Any])?["run_id"] as? String == id }.compactMap { $0["type"] as? String }
        } while !(types.contains("task.queued") && types.contains("task.started")) && Date() < deadline
        #expect(types.starts(with: ["task.queued", "task.started"]), "\(types)")
    }
}
