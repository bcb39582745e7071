@testable import AgentBase
import AgentTestSupport
import Foundation
import Synchronization
import Testing

/// Blocking work (a store read of seconds) goes to threads of its own, a few at a time, and
/// never holds Swift's cooperative pool, which is as wide as the cores.
@Suite(.ownThreads) struct BlockingPoolTests {
    private final class Gate: Sendable {
        let release = DispatchSemaphore(value: 0)
        let running = Atomic<Int>(0)
        let most = Atomic<Int>(0)
        let started = Atomic<Int>(0)
        let finished = Atomic<Int>(0)

        func job() -> Int {
            let now = running.add(1, ordering: .sequentiallyConsistent).newValue
            _ = most.max(now, ordering: .sequentiallyConsistent)
            let order = started.add(1, ordering: .sequentiallyConsistent).newValue
            release.wait()
            running.subtract(1, ordering: .sequentiallyConsistent)
            finished.add(1, ordering: .sequentiallyConsistent)
            return order
        }
    }

    /// Waits for `condition`, yielding its cooperative thread meanwhile: a `usleep` here held
    /// one of the pool's two threads for the whole wait, and with the other held by another
    /// test the twenty reads could not even be handed to the pool (a CI run waited 60 s).
    private func eventually(_ condition: () -> Bool) async -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while !condition() {
            guard Date() < deadline else { return false }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return true
    }

    @Test func twentyBlockedReadsRunFourAtATimeAndTheCooperativePoolGoesOnMeanwhile() async {
        let pool = BlockingPool(name: "test-blocking", width: 4)
        let gate = Gate()
        let reads = (0..<20).map { _ in Task.detached { await pool.run { gate.job() } } }
        #expect(await eventually { gate.started.load(ordering: .sequentiallyConsistent) == 4 })
        // Twenty reads wait, four of them blocked in their threads: a task on the cooperative
        // pool (two threads here) still runs at once, twice over.
        let pooled = await Task.detached { await Task.detached { 6 * 7 }.value }.value
        #expect(pooled == 42)
        #expect(gate.started.load(ordering: .sequentiallyConsistent) == 4, "more than the pool's width ran at once")
        for _ in 0..<20 { gate.release.signal() }
        var orders: [Int] = []
        for read in reads { orders.append(await read.value) }
        #expect(orders.sorted() == Array(1...20))
        #expect(gate.finished.load(ordering: .sequentiallyConsistent) == 20)
        #expect(gate.most.load(ordering: .sequentiallyConsistent) == 4)
    }
}
