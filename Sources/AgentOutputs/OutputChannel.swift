import AgentCore
import CAgentSystem
import Foundation
import Logging

/// One output at run time: its bounded queue, the thread that empties it into a sink, and its
/// counters.
///
/// The supervisor's event loop calls `offer`, which only takes a lock for an O(1) append; the
/// sink's blocking I/O runs on the channel's own thread, outside Swift concurrency's
/// cooperative pool. When the queue is full, the oldest record is dropped and counted: fresh
/// records are worth more to a person watching an agent than old ones.
package final class OutputChannel: @unchecked Sendable {
    package let name: String
    package let typeName: String
    package let kinds: Set<OutputRecord.Kind>
    package let logger: Logger
    private let sink: any OutputSink
    private let batchLimit: Int
    private let linger: Double

    // Everything below is guarded by `condition`.
    private let condition = NSCondition()
    private var ring: OutputRing
    /// Monotonic time from which the oldest queued record waits for its batch to fill.
    private var batchStart = 0.0
    private var inFlight = 0
    private var delivered: UInt64 = 0
    private var dropped: UInt64 = 0
    private var failedAttempts: UInt64 = 0
    private var lastError: String?
    private var stopDeadline: Double?
    private var finished = false
    private var droppedAtStop = false

    package init(configuration: OutputConfiguration, sink: any OutputSink, logger: Logger) {
        name = configuration.name
        typeName = configuration.typeName
        kinds = configuration.kinds
        ring = OutputRing(capacity: configuration.buffer)
        self.sink = sink
        batchLimit = max(1, sink.batchLimit)
        linger = sink.linger
        self.logger = logger
    }

    /// Monotonic seconds, for deadlines that wall-clock changes do not move.
    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    package func start() {
        let thread = Thread { [self] in run() }
        thread.name = "output \(name)"
        thread.start()
    }

    // MARK: Producer side (the supervisor's thread)

    /// Queues `record` without waiting for the output.
    package func offer(_ record: OutputRecord) {
        condition.lock()
        defer { condition.unlock() }
        guard stopDeadline == nil else {
            dropped += 1
            return
        }
        if ring.append(record) {
            dropped += 1
        } else if ring.count == 1 || ring.count == batchLimit {
            // The thread sleeps only on an empty queue or while a batch fills: wake it on
            // exactly those transitions rather than on every record.
            if ring.count == 1 { batchStart = Self.now() }
            condition.signal()
        }
    }

    // MARK: Control

    package func requestStop(deadline: Double) {
        condition.lock()
        if stopDeadline == nil { stopDeadline = deadline }
        condition.broadcast()
        condition.unlock()
    }

    /// Waits until the thread has ended or `deadline` passes; returns whether it ended with
    /// nothing dropped at stop.
    package func waitUntilFinished(deadline: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !finished {
            let remaining = deadline - Self.now()
            if remaining <= 0 { return false }
            condition.wait(seconds: remaining)
        }
        return !droppedAtStop
    }

    package var statistics: OutputStatistics {
        condition.lock()
        defer { condition.unlock() }
        return OutputStatistics(
            name: name, type: typeName, delivered: delivered, dropped: dropped, failedAttempts: failedAttempts,
            lastError: lastError, queued: ring.count + inFlight
        )
    }

    // MARK: Sink side (the channel's thread)

    private func run() {
        agent_set_thread_name("output-\(typeName)")
        // A reader that went away (stdout piped into `head`) must cost an EPIPE here, not the
        // supervisor: SIGPIPE from write(2) goes to the writing thread, so block it there.
        var pipeSignal = SIGPIPE
        _ = agent_block_signals(&pipeSignal, 1)
        while let batch = nextBatch() {
            sink.deliver(batch, channel: self)
            condition.lock()
            inFlight = 0
            let idle = ring.count == 0
            condition.unlock()
            if idle { sink.flush(channel: self) }
        }
        sink.flush(channel: self)
        sink.close(channel: self)
        condition.lock()
        let left = ring.count
        if left > 0 {
            dropped += UInt64(left)
            droppedAtStop = true
            _ = ring.removeFirst(upTo: left)
        }
        finished = true
        condition.broadcast()
        condition.unlock()
        if left > 0 { logger.warning("\(name): stopped with \(left) records still queued; they are dropped") }
    }

    /// The next batch to deliver: waits for records, and for a batch to fill up to the sink's
    /// limit or its linger time. `nil` once stopping and nothing more can be sent.
    private func nextBatch() -> [OutputRecord]? {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = Self.now()
            if let deadline = stopDeadline, ring.count == 0 || now >= deadline { return nil }
            if ring.count == 0 {
                condition.wait()
                continue
            }
            let ready = stopDeadline != nil || ring.count >= batchLimit || now >= batchStart + linger
            if !ready {
                condition.wait(seconds: batchStart + linger - now)
                continue
            }
            let batch = ring.removeFirst(upTo: batchLimit)
            inFlight = batch.count
            // What is left waits at most one more linger from now.
            batchStart = now
            return batch
        }
    }

    /// `deadline`, or the stop deadline if that comes first.
    package func effectiveDeadline(_ deadline: Double) -> Double {
        condition.lock()
        defer { condition.unlock() }
        return min(deadline, stopDeadline ?? .infinity)
    }

    /// Sleeps until `deadline`; returns `false` if the stop deadline came first and cut the
    /// sleep short.
    package func sleep(until deadline: Double) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while true {
            let now = Self.now()
            let stop = stopDeadline ?? .infinity
            if stop < deadline, now >= stop { return false }
            if now >= deadline { return true }
            condition.wait(seconds: min(deadline, stop) - now)
        }
    }

    /// Waits until `isDone` (evaluated under the channel's lock; see `notify`) or `deadline`,
    /// cut short by the stop deadline. Returns whether `isDone` became true.
    package func wait(until deadline: Double, for isDone: () -> Bool) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !isDone() {
            let remaining = min(deadline, stopDeadline ?? .infinity) - Self.now()
            if remaining <= 0 { return false }
            condition.wait(seconds: remaining)
        }
        return true
    }

    /// Whether `stop` was called and its deadline has passed.
    package var isPastStopDeadline: Bool {
        condition.lock()
        defer { condition.unlock() }
        return stopDeadline.map { Self.now() >= $0 } ?? false
    }

    /// Reads state that `notify` writes.
    package func synchronized<T>(_ body: () -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        return body()
    }

    /// Runs `change` under the channel's lock and wakes a `wait`.
    package func notify(_ change: () -> Void) {
        condition.lock()
        change()
        condition.broadcast()
        condition.unlock()
    }

    // MARK: Accounting, from the sink

    package func recordDelivered(_ count: Int) {
        condition.lock()
        delivered += UInt64(count)
        condition.unlock()
    }

    /// Counts records the sink gave up on; `atStop` when `stop` ran out of time for them.
    package func recordDropped(_ count: Int, atStop: Bool = false) {
        condition.lock()
        dropped += UInt64(count)
        if atStop { droppedAtStop = true }
        condition.unlock()
    }

    /// Counts a failed attempt and keeps its description; returns how many failed so far.
    @discardableResult
    package func recordFailure(_ description: String) -> UInt64 {
        condition.lock()
        defer { condition.unlock() }
        failedAttempts += 1
        lastError = description
        return failedAttempts
    }
}
