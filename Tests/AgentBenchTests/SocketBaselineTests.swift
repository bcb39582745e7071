import AgentTestSupport
import Testing

@testable import agent_bench

/// Figure 4's floors through the real child processes of agent-bench (built beside the tests):
/// the one-hop socketpair and the two-hop relay must hand the receiver every frame, once, in
/// order, whether sent in 64 KiB batches or paced one by one.
@Suite(.ownThreads, .serialized) struct SocketBaselineTests {
    func environment() throws -> BenchEnvironment {
        try BenchEnvironment(quick: true, selfPath: TestPaths.products + "/agent-bench")
    }

    @Test(arguments: [false, true])
    func everyBatchedFrameArrivesOnceInOrder(relay: Bool) throws {
        let environment = try environment()
        defer { environment.removeScratch() }
        let result = try SocketBaseline.run(environment, count: 50_000, payloadBytes: 100, rate: 0, relay: relay)
        #expect(result.expected == 50_000)
        #expect(result.count == 50_000)
        #expect(result.outOfOrder == 0)
        #expect(result.payloadBytes == 100)
        #expect(result.lastReceived >= result.firstEmitted)
    }

    @Test(arguments: [false, true])
    func pacedFramesArriveWithTheirLatencies(relay: Bool) throws {
        let environment = try environment()
        defer { environment.removeScratch() }
        let result = try SocketBaseline.run(environment, count: 300, payloadBytes: 1024, rate: 2000, relay: relay)
        #expect(result.isComplete, "\(result.count) of \(result.expected), \(result.outOfOrder) out of order")
        #expect(result.payloadBytes == 1024)
        // Paced at 2,000/s from the first frame's due time, the run spans close to 299 intervals of
        // 0.5 ms; the first stamp may be late, and the stamps are wall-clock time.
        #expect(result.lastEmitted - result.firstEmitted >= 250 * 500_000)
        #expect(result.latencyP50 > 0 && result.latencyP50 <= result.latencyP99 && result.latencyP99 <= result.latencyMax)
        #expect(result.latencyMax <= result.lastReceived - result.firstEmitted)
    }
}
