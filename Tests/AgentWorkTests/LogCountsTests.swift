@testable import AgentWork
import Testing

/// A cause that repeats is logged the 1st, 10th, 100th… time, per key: a branching trigger
/// cycle stopped 65,536 times wrote 28,619 log lines, where the docs promise one.
struct LogCountsTests {
    @Test func aRepeatedCauseIsToldOncePerPowerOfTenPerKey() {
        var counts = LogCounts()
        let told = (1...65_536).compactMap { _ in counts.add("workflow pong") }
        #expect(told == [1, 10, 100, 1_000, 10_000])
        #expect(counts.add("task ping") == 1, "another key counts apart")
        #expect(counts.count(of: "workflow pong") == 65_536)
        #expect(LogCounts.times(1) == "" && LogCounts.times(100) == " (100 times so far)")
    }
}
