import AgentTestSupport
@testable import AgentWork
import Testing

/// Priority aging in the queue (``RunQueue``): no starvation of low priorities.
@Suite(.ownThreads) struct RunQueueAgingTests {
    /// A steady high-priority load: one high run arrives and one run starts per second, over a
    /// backlog of `backlog` high runs; a low run is queued at second 0. Returns the second it
    /// starts (nil: not within `seconds`).
    static func lowRunStart(agingInterval: Double, backlog: Int, seconds: Int) -> Int? {
        var queue = RunQueue()
        var sequence = 0
        func add(_ id: String, _ priority: TaskRun.Priority, at time: Double) {
            sequence += 1
            queue.insert(RunQueue.Entry(id: id, rank: priority.rank, due: time, sequence: sequence, agingInterval: agingInterval))
        }
        for second in -backlog..<0 { add("high\(second)", .high, at: Double(second)) }
        add("low", .low, at: 0)
        for second in 0..<seconds {
            add("high\(second)", .high, at: Double(second))
            if queue.popFirst()?.id == "low" { return second }
        }
        return nil
    }

    @Test func aLowRunStartsWithinItsBoundUnderASteadyHighPriorityLoad() {
        // The bound: a low run is overtaken by no high run queued more than (2 − 0) × the
        // interval after it, so it starts once the runs queued before that have started.
        let interval = 30.0, backlog = 50
        let start = Self.lowRunStart(agingInterval: interval, backlog: backlog, seconds: 10_000)
        #expect(start != nil)
        #expect(start! <= Int(2 * interval) + backlog + 1, "started at second \(start!)")
        // Without aging (an interval far longer than the scenario) it would wait for ever.
        #expect(Self.lowRunStart(agingInterval: 1e12, backlog: backlog, seconds: 10_000) == nil)
    }

    @Test func runsQueuedTogetherStillGoByPriority() {
        var queue = RunQueue()
        for (index, priority) in [TaskRun.Priority.low, .critical, .normal, .high].enumerated() {
            queue.insert(RunQueue.Entry(id: priority.rawValue, rank: priority.rank, due: 100 + Double(index) * 0.01, sequence: index))
        }
        #expect((0..<4).compactMap { _ in queue.popFirst()?.id } == ["critical", "high", "normal", "low"])
    }
}
