import AgentTestSupport
import Foundation
import Testing

/// The bench module through the real binaries: what agent-bench's routing figure relies on.
/// Needs `swift build` first (libbench.so is one of the shipped modules).
@Suite(.ownThreads, .serialized) struct BenchModuleTests {
    /// The sink's report for a stream of `count` events from the source.
    func report(count: Int, payloadBytes: Int, rate: Double, environment: [String: String] = [:]) throws -> [String: Any] {
        let agent = try AgentRun(settings: """
        {"enabled_modules": ["bench"],
         "processes": {
           "source": {"type": "bench_source", "count": \(count), "payload_bytes": \(payloadBytes), "rate": \(rate), "start_delay": 0.2},
           "sink": {"type": "bench_sink"}
         }}
        """, arguments: ["--no-build", "--json", "--quiet"], environment: environment)
        defer { _ = agent.stop() }
        let line = agent.waitForLine(timeout: 30) { $0.contains(#""source":"sink""#) && $0.contains("bench_result") }
        let message = try #require(line.flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] },
                                   "no result from the sink:\n\(agent.transcript)")
        let text = try #require(message["text"] as? String)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
        return try #require(report["bench_result"] as? [String: Any])
    }

    @Test func sourceAndSinkAgreeOnEveryEventThroughTheSupervisor() throws {
        let result = try report(count: 5000, payloadBytes: 100, rate: 0)
        #expect(result["expected"] as? Int == 5000)
        #expect(result["count"] as? Int == 5000)
        #expect(result["out_of_order"] as? Int == 0)
        #expect(result["payload_bytes"] as? Int == 100)
        let first = try #require(result["first_emitted_ns"] as? Int)
        let last = try #require(result["last_received_ns"] as? Int)
        #expect(last > first)
    }

    /// `AGENT_WORKER_EVENT_WAIT=off` (any of the switches' spellings) takes the path before
    /// stop 72: the sink's code on the pool, woken through the worker's reader thread.
    @Test func everyEventArrivesWithTheEventWaitSwitchedOff() throws {
        let result = try report(count: 3000, payloadBytes: 100, rate: 0, environment: ["AGENT_WORKER_EVENT_WAIT": "off"])
        #expect(result["count"] as? Int == 3000)
        #expect(result["out_of_order"] as? Int == 0)
    }

    @Test func pacedEventsKeepTheirSizeAndOrder() throws {
        let result = try report(count: 200, payloadBytes: 1024, rate: 1000)
        #expect(result["count"] as? Int == 200)
        #expect(result["out_of_order"] as? Int == 0)
        #expect(result["payload_bytes"] as? Int == 1024)
        // The latencies, from the sink's histogram: ordered, and none beyond the run's span.
        let p50 = try #require(result["latency_p50_ns"] as? Int)
        let p99 = try #require(result["latency_p99_ns"] as? Int)
        let maximum = try #require(result["latency_max_ns"] as? Int)
        let span = try #require(result["last_received_ns"] as? Int) - (try #require(result["first_emitted_ns"] as? Int))
        #expect(p50 > 0 && p50 <= p99 && p99 <= maximum && maximum <= span, "p50 \(p50), p99 \(p99), max \(maximum), span \(span)")
    }
}
