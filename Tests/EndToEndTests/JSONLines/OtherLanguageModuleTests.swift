import AgentTestSupport
import Foundation
import Testing

/// The examples of examples/jsonl, which use no SDK — only lines of JSON — in the real agent:
/// a bash datasource, and a Node.js monitor (where `node` is installed; the test is skipped
/// elsewhere, and the example stays as documentation).
@Suite(.ownThreads) struct OtherLanguageModuleTests {
    static let nodeInstalled: Bool = {
        (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":")
            .contains { FileManager.default.isExecutableFile(atPath: "\($0)/node") }
    }()

    @Test func aBashDatasourceEmitsNumberedTicksAndStopsOnTheStopFrame() throws {
        let agent = try JSONLinesFixture.start(#""clock": {"type": "clock", "interval": 0.05}"#, modules: ["clock"], label: "bash-clock")
        let ticks = JSONLinesFixture.wait { () -> [[String: Any]]? in
            let events = JSONLinesFixture.events(agent, type: "clock_tick")
            return events.count >= 5 ? events : nil
        }
        #expect(ticks?.prefix(5).compactMap { ($0["payload"] as? [String: Any])?["n"] as? Int } == [1, 2, 3, 4, 5], "\(agent.transcript)")
        #expect(ticks?.allSatisfy { $0["source"] as? String == "clock" } == true)
        #expect(agent.stderrLines.contains { $0.contains("[clock]") && $0.contains("ticking every 0.05 s") }, "its stderr reaches the log")
        #expect(agent.stop() == 0, "\(agent.transcript)")
        // It ended on the stop frame: no SIGKILL after the stop timeout.
        #expect(!agent.stderrLines.contains { $0.contains("[clock]") && $0.contains("SIGKILL") }, "\(agent.transcript)")
    }

    @Test(.enabled(if: nodeInstalled, "node is not installed")) func aNodeMonitorCountsTheBashClocksTicksAndAlerts() throws {
        let agent = try JSONLinesFixture.start("""
            "clock": {"type": "clock", "interval": 0.05},
            "ticks": {"type": "tick_counter", "every": 3}
            """, modules: ["clock", "tick_counter"], label: "node-monitor")
        // Every third tick it received (those emitted before it was ready wait in its queue or
        // are not its), an alert.
        let alerts = agent.waitForLines(count: 2) { $0.contains(" ticks from clock, the last n=") }.prefix(2)
        #expect(alerts.count == 2, "\(agent.transcript)")
        #expect(alerts.first?.contains("3 ticks from clock") == true && alerts.last?.contains("6 ticks from clock") == true, "\(alerts)")
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
