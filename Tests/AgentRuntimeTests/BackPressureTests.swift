import Foundation
import Testing
@testable import AgentRuntime

/// A slow monitor with a bounded queue: the stated policy applies (drop the oldest and count,
/// or pause its producers) and nothing else is held up.
@Suite(.serialized) struct BackPressureTests {
    static func status(_ agent: AgentRun) throws -> [String: [String: Any]] {
        let result = try StoreTests.control(["status", "--json", "--settings", agent.settingsFile])
        let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let list = object?["processes"] as? [[String: Any]] ?? []
        return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
    }

    static func waitFor(_ agent: AgentRun, timeout: Double = 45, _ condition: ([String: [String: Any]]) -> Bool) throws -> [String: [String: Any]] {
        let deadline = Date().addingTimeInterval(timeout)
        var last = try status(agent)
        while !condition(last), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            last = try status(agent)
        }
        return last
    }

    @Test func slowMonitorLosesItsOldestEventsCountedWhileTheProducerGoesOn() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "fast": {"type": "fault", "tick_ms": 0},
          "slow": {"type": "slow_sink", "delay_ms": 50, "queue": {"limit_bytes": 4096}}}}
        """, arguments: ["--no-build", "--quiet"])
        let status = try Self.waitFor(agent) { ($0["slow"]?["events_dropped"] as? Int ?? 0) > 1000 && ($0["fast"]?["events_emitted"] as? Int ?? 0) > 5000 }
        #expect((status["slow"]?["events_dropped"] as? Int ?? 0) > 1000, "\(status)")
        #expect((status["fast"]?["events_emitted"] as? Int ?? 0) > 5000)
        #expect((status["slow"]?["queued_bytes"] as? Int ?? .max) <= 4096 + 256 * 1024)
        #expect(status["fast"]?["paused"] == nil)
        #expect(agent.stderrLines.contains { $0.contains("[slow] event queue full (4096 bytes): dropped the") })
        #expect(agent.stop() == 0)
    }

    @Test func blockingMonitorPausesOnlyItsProducersAndLosesNothing() throws {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "fast": {"type": "fault", "tick_ms": 0, "event_type": "a"},
          "other": {"type": "fault", "tick_ms": 0, "event_type": "b"},
          "slow": {"type": "slow_sink", "delay_ms": 20, "subscribe": ["a"], "queue": {"limit_bytes": 4096, "when_full": "block"}},
          "quick": {"type": "slow_sink", "delay_ms": 0, "subscribe": ["b"]}}}
        """, arguments: ["--no-build", "--quiet"])
        let status = try Self.waitFor(agent) { $0["fast"]?["paused"] as? Bool == true && ($0["other"]?["events_emitted"] as? Int ?? 0) > 20_000 }
        #expect(status["fast"]?["paused"] as? Bool == true, "\(status)")
        #expect(status["other"]?["paused"] == nil)
        #expect((status["other"]?["events_emitted"] as? Int ?? 0) > 20_000)
        #expect(status["slow"]?["events_dropped"] as? Int == 0)
        #expect((status["slow"]?["queued_bytes"] as? Int ?? .max) <= 4096 + 256 * 1024)
        #expect(agent.stderrLines.contains { $0.contains("[fast] paused: slow is behind") })
        #expect(agent.stop() == 0)
    }
}
