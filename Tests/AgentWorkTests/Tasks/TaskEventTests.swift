import AgentTestSupport
import Foundation
import Testing

/// Task events on the bus and `on_event` triggers, with real workers of the `faults` module.
@Suite(.ownThreads) struct TaskEventTests {
    @Test func anEventWhosePayloadPassesTheConditionRunsTheTaskWithTheEventAsInput() throws {
        let (agent, port) = try TaskAgent.agent(tasks: #"""
            "on_tick": {"type": "command", "command": ["/bin/true"],
                        "on_event": {"type": "fault_tick", "where": {"properties": {"tick": {"minimum": 3, "maximum": 3}}, "required": ["tick"]}}}
            """#, modules: #"["faults"]"#, processes: #"{"ticker": {"type": "fault", "mode": "healthy", "tick_ms": 20}}"#)
        defer { _ = agent.stop() }
        var runs: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(30)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            runs = try TaskAgent.http("GET", "/api/runs?task=on_tick", port: port).json["runs"] as? [[String: Any]] ?? []
        } while runs.isEmpty && Date() < deadline
        // Well past tick 3: still exactly one run.
        Thread.sleep(forTimeInterval: 0.3)
        runs = try TaskAgent.http("GET", "/api/runs?task=on_tick", port: port).json["runs"] as? [[String: Any]] ?? []
        #expect(runs.count == 1, "\(runs)\n\(agent.transcript)")
        let run = try #require(runs.first)
        #expect(run["requested_by"] as? String == "event")
        let input = try #require(run["input"] as? [String: Any])
        #expect(input["type"] as? String == "fault_tick")
        #expect(input["source"] as? String == "ticker")
        #expect((input["payload"] as? [String: Any])?["tick"] as? Int == 3)
    }

    @Test func taskEventsReachSubscribedProcessesAndTheStore() throws {
        let (agent, port) = try TaskAgent.agent(
            tasks: #""job": {"type": "command", "command": ["/bin/true"]}"#, modules: #"["faults"]"#,
            processes: #"{"echo": {"type": "relay", "out_type": "echoed", "burst": 0, "subscribe": ["task.queued"]}}"#)
        defer { _ = agent.stop() }
        // The relay's worker subscribes once it runs.
        Thread.sleep(forTimeInterval: 1)
        let queued = try TaskAgent.http("POST", "/api/tasks/job/run", port: port, body: "{}")
        let id = try #require((queued.json["run"] as? [String: Any])?["id"] as? String, "\(queued.body)")
        let echoed = agent.waitForLine { $0.contains(#""type":"echoed""#) }
        #expect(echoed != nil, "the relay subscribed to task.queued received it and emitted echoed\n\(agent.transcript)")
        let shown = agent.waitForLine { $0.contains(#""source":"tasks""#) && $0.contains(#""type":"task.queued""#) }
        #expect(shown?.contains(id) == true)

        var types: [String] = []
        let deadline = Date().addingTimeInterval(20)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            let events = try TaskAgent.http("GET", "/api/events?source=tasks", port: port).json["events"] as? [[String: Any]] ?? []
            types = events.filter { ($0["payload"] as? [String: Any])?["run_id"] as? String == id }.compactMap { $0["type"] as? String }
        } while !(types.contains("task.queued") && types.contains("task.started")) && Date() < deadline
        #expect(types.starts(with: ["task.queued", "task.started"]), "\(types)")
    }
}

/// The `on_event` example of docs/tasks.md on the sample module's alert, as written: its `count` is a
/// number, so `minimum` compares it (it was a string, and the condition passed every alert).
@Suite(.ownThreads) struct SampleAlertConditionTests {
    @Test func theReadmesConditionOnTheAlertsCountComparesANumber() throws {
        let (agent, port) = try TaskAgent.agent(tasks: #"""
            "on_alert": {"type": "command", "command": ["/bin/true"],
                         "on_event": {"type": "frequency_alert", "where": {"properties": {"count": {"minimum": 100}}}}},
            "on_any_alert": {"type": "command", "command": ["/bin/true"],
                             "on_event": {"type": "frequency_alert", "where": {"properties": {"count": {"minimum": 1}}}}}
            """#, modules: #"["sample"]"#, processes: #"""
            {"trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.02, "seed": 1},
             "busy": {"type": "trade_frequency", "window": 30, "threshold": 5}}
            """#)
        defer { _ = agent.stop() }
        let alert = agent.waitForLine { $0.contains(#""type":"frequency_alert""#) }
        #expect(alert?.contains(#""count":6"#) == true, "the alert's count is a number: \(alert ?? agent.transcript)")
        var any: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(60)
        repeat {
            Thread.sleep(forTimeInterval: 0.2)
            any = try TaskAgent.http("GET", "/api/runs?task=on_any_alert", port: port).json["runs"] as? [[String: Any]] ?? []
        } while any.isEmpty && Date() < deadline
        #expect(any.count == 1, "the alert (count 6) passes minimum 1: \(any)\n\(agent.transcript)")
        // Both triggers saw the same one alert; the one asking for 100 was not run.
        let hundred = try TaskAgent.http("GET", "/api/runs?task=on_alert", port: port).json["runs"] as? [[String: Any]] ?? []
        #expect(hundred.isEmpty, "a count of 6 passed minimum 100: \(hundred)")
    }
}
