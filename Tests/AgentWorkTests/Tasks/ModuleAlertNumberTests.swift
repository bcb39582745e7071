import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The shipped modules' alerts carry numbers as numbers, so that an `on_event` condition on
/// them compares numbers — docs/tasks.md's example taken from the guide itself, on a real agent.
@Suite(.ownThreads) struct ModuleAlertNumberTests {
    /// The `on_event` of the task `on_alert` of docs/tasks.md, as the guide writes it.
    static func guideTrigger() throws -> JSONValue {
        let readme = try String(contentsOfFile: TestPaths.repository + "/docs/tasks.md", encoding: .utf8)
        let block = try #require(MarkdownExamples.blocks(in: readme, languages: ["json"]).first { $0.lines.joined().contains(#""on_alert""#) },
                                 "docs/tasks.md's example with on_alert")
        let tasks = try JSONValue.parse("{" + block.lines.joined(separator: "\n") + "}")
        return try #require(tasks["tasks"]?["on_alert"]?["on_event"], "\(tasks)")
    }

    /// Waits (60 s at most) until the task `name` has a run; returns its runs.
    static func runs(of name: String, port: Int) throws -> [[String: Any]] {
        var runs: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(60)
        repeat {
            runs = try TaskAgent.http("GET", "/api/runs?task=\(name)", port: port).json["runs"] as? [[String: Any]] ?? []
            if runs.isEmpty { Thread.sleep(forTimeInterval: 0.2) }
        } while runs.isEmpty && Date() < deadline
        return runs
    }

    @Test func theReadmesOnEventExampleFiresOnTheSampleModulesAlert() throws {
        let trigger = try Self.guideTrigger()
        #expect(trigger["where"] == ["properties": ["count": ["minimum": 100]]], "\(trigger)")
        // The alert comes at the 101st trade of the window: a count of 101 passes minimum 100.
        let (agent, port) = try TaskAgent.agent(tasks: #""on_alert": {"type": "command", "command": ["/bin/true"], "on_event": \#(trigger.serialized())}"#,
                                                modules: #"["sample"]"#, processes: #"""
            {"trades": {"type": "trade_feed", "pairs": ["ETH/USD"], "interval": 0.005, "seed": 1},
             "busy": {"type": "trade_frequency", "window": 60, "threshold": 100}}
            """#)
        defer { _ = agent.stop() }
        let alert = agent.waitForLine { $0.contains(#""type":"frequency_alert""#) }
        #expect(alert?.contains(#""count":101"#) == true, "\(alert ?? agent.transcript)")
        let runs = try Self.runs(of: "on_alert", port: port)
        #expect(runs.count == 1, "docs/tasks.md's on_event started no run on the alert: \(runs)\n\(agent.transcript)")
    }

    @Test func theSystemModulesThresholdAlertCarriesItsValueAsANumber() throws {
        let (agent, port) = try TaskAgent.agent(
            tasks: #""page": {"type": "command", "command": ["/bin/true"], "on_event": {"type": "threshold_alert", "where": {"properties": {"value": {"minimum": 95}}}}}"#,
            store: #""workflows": {"spike": {"steps": [{"id": "p", "publish": {"type": "host_stats", "payload": {"cpu_percent": 99}}}]}},"#,
            modules: #"["system"]"#, processes: #"{"watch": {"type": "threshold_monitor", "rules": [{"metric": "cpu_percent", "above": 90}]}}"#)
        defer { _ = agent.stop() }
        // Published until the monitor (once its worker subscribes) has alerted.
        var alerts: [[String: Any]] = []
        let deadline = Date().addingTimeInterval(60)
        repeat {
            _ = try TaskAgent.http("POST", "/api/workflows/spike/run", port: port, body: #"{"wait": true}"#)
            alerts = try TaskAgent.http("GET", "/api/events?type=threshold_alert", port: port).json["events"] as? [[String: Any]] ?? []
            if alerts.isEmpty { Thread.sleep(forTimeInterval: 0.2) }
        } while alerts.isEmpty && Date() < deadline
        let payload = try #require(alerts.first?["payload"] as? [String: Any], "no threshold_alert\n\(agent.transcript)")
        #expect(payload["value"] as? Double == 99 && !(payload["value"] is String), "\(payload)")
        #expect(payload["metric"] as? String == "cpu_percent" && payload["above"] as? Double == 90, "\(payload)")
        #expect(try Self.runs(of: "page", port: port).count == 1, "a value of 99 passes minimum 95\n\(agent.transcript)")
    }
}
