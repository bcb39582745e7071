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
package final class OutputChannel: Sendable {
    package let name: String
    package let typeName: String
    package let kinds: Set<OutputRecord.Kind>
    package let logger: Logger
    private let sink: ConfinedSink
    private let batchLimit: Int
    private let linger: Double
    private let state: Guarded<State>

    /// The sink, which only the channel's own thread touches (``OutputSink``'s contract).
    // @unchecked: confined to that thread by construction (made before it starts, used only by it).
    private struct ConfinedSink: @unchecked Sendable {
        let sink: any OutputSink
    }

    /// The queue and the counters, shared by the producer, the channel's thread and readers.
    private struct State: Sendable {
        var ring: OutputRing
        /// Monotonic time from which the oldest queued record waits for its batch to fill.
        var batchStart = 0.0
        var inFlight = 0
        var delivered: UInt64 = 0
        var dropped: UInt64 = 0
        var failedAttempts: UInt64 = 0
        var lastError: String?
        var stopDeadline: Double?
        var finished = false
        var droppedAtStop = false
    }

    package init(configuration: OutputConfiguration, sink: any OutputSink, logger: Logger) {
        name = configuration.name
        typeName = configuration.typeName
        kinds = configuration.kinds
        state = Guarded(State(ring: OutputRing(capacity: configuration.buffer, byteLimit: configuration.bufferBytes)))
        self.sink = ConfinedSink(sink: sink)
        batchLimit = max(1, sink.batchLimit)
        linger = sink.linger
        self.logger = logger
    }

    /// A date `seconds` from now (monotonic deadlines become the condition's wall-clock ones
    /// each time it waits).
    private static func date(in seconds: Double) -> Date { Date(saturatingSecondsFromNow: seconds) }

    /// Monotonic seconds, for deadlines that wall-clock changes do not move.
    package static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    package func start() {
        if let refused = SystemThread.run("output \(name)", { [self] in run() }) {
            logger.error("output \(name): \(refused); nothing goes to it until the agent starts again")
        }
    }

    // MARK: Producer side (the supervisor's thread)

    /// Queues `record` without waiting for the output.
    package func offer(_ record: OutputRecord) {
        let batchLimit = batchLimit
        let wake = state.withLock { state -> Bool in
            guard state.stopDeadline == nil else {
                state.dropped += 1
                return false
            }
            let wasEmpty = state.ring.count == 0
            let dropped = state.ring.append(record)
            state.dropped += UInt64(dropped)
            // The thread sleeps only on an empty queue or while a batch fills: wake it on
            // exactly those transitions rather than on every record.
            if wasEmpty { state.batchStart = Self.now() }
            return wasEmpty || (dropped == 0 && state.ring.count == batchLimit)
        }
        if wake { state.signal() }
    }

    // MARK: Control

    package func requestStop(deadline: Double) {
        state.withLock { if $0.stopDeadline == nil { $0.stopDeadline = deadline } }
        state.broadcast()
    }

    /// Waits until the thread has ended or `deadline` passes; returns whether it ended with
    /// nothing dropped at stop.
    package func waitUntilFinished(deadline: Double) -> Bool {
        state.withLock(waitingUntil: { $0.finished ? nil : Self.date(in: deadline - Self.now()) }) { $0.finished && !$0.droppedAtStop }
    }

    package var statistics: OutputStatistics {
        state.withLock { state in
            OutputStatistics(name: name, type: typeName, delivered: state.delivered, dropped: state.dropped, failedAttempts: state.failedAttempts,
                             lastError: state.lastError, queued: state.ring.count + state.inFlight)
        }
    }

    // MARK: Sink side (the channel's thread)

    private func run() {
        agent_set_thread_name("output-\(typeName)")
        // A reader that went away (stdout piped into `head`) must cost an EPIPE here, not the
        // supervisor: SIGPIPE from write(2) goes to the writing thread, so block it there.
        var pipeSignal = SIGPIPE
        _ = agent_block_signals(&pipeSignal, 1)
        let sink = sink.sink
        while let batch = nextBatch() {
            sink.deliver(batch, channel: self)
            let idle = state.withLock { state in
                state.inFlight = 0
                return state.ring.count == 0
            }
            if idle { sink.flush(channel: self) }
        }
        sink.flush(channel: self)
        sink.close(channel: self)
        let left = state.withLock { state in
            let left = state.ring.count
            if left > 0 {
                state.dropped += UInt64(left)
                state.droppedAtStop = true
                _ = state.ring.removeFirst(upTo: left)
            }
            state.finished = true
            return left
        }
        state.broadcast()
        if left > 0 { logger.warning("\(name): stopped with \(left) records still queued; they are dropped") }
    }

    /// The next batch to deliver: waits for records, and for a batch to fill up to the sink's
    /// limit or its linger time. `nil` once stopping and nothing more can be sent.
    private func nextBatch() -> [OutputRecord]? {
        let batchLimit = batchLimit, linger = linger
        while true {
            let next = state.withLock(waitingUntil: { state -> Date? in
                let now = Self.now()
                if let deadline = state.stopDeadline, state.ring.count == 0 || now >= deadline { return nil }
                if state.ring.count == 0 { return .distantFuture }
                let ready = state.stopDeadline != nil || state.ring.count >= batchLimit || now >= state.batchStart + linger
                return ready ? nil : Self.date(in: state.batchStart + linger - now)
            }) { state -> [OutputRecord]?? in
                let now = Self.now()
                if let deadline = state.stopDeadline, state.ring.count == 0 || now >= deadline { return .some(nil) }
                let ready = state.ring.count > 0
                    && (state.stopDeadline != nil || state.ring.count >= batchLimit || now >= state.batchStart + linger)
                guard ready else { return nil }  // the wait ended early: again
                let batch = state.ring.removeFirst(upTo: batchLimit)
                state.inFlight = batch.count
                // What is left waits at most one more linger from now.
                state.batchStart = now
                return .some(batch)
            }
            if let next { return next }
        }
    }

    /// `deadline`, or the stop deadline if that comes first.
    package func effectiveDeadline(_ deadline: Double) -> Double {
        state.withLock { min(deadline, $0.stopDeadline ?? .infinity) }
    }

    /// Sleeps until `deadline`; returns `false` if the stop deadline came first and cut the
    /// sleep short.
    package func sleep(until deadline: Double) -> Bool {
        let passed = { (state: State) -> Bool? in
            let now = Self.now()
            let stop = state.stopDeadline ?? .infinity
            if stop < deadline, now >= stop { return false }
            return now >= deadline ? true : nil
        }
        while true {
            let outcome = state.withLock(waitingUntil: { state in
                passed(state) == nil ? Self.date(in: min(deadline, state.stopDeadline ?? .infinity) - Self.now()) : nil
            }) { passed($0) }
            if let outcome { return outcome }
        }
    }

    /// Waits until `isDone` (evaluated under the channel's lock; see `notify`) or `deadline`,
    /// cut short by the stop deadline. Returns whether `isDone` became true.
    package func wait(until deadline: Double, for isDone: () -> Bool) -> Bool {
        state.withLock(waitingUntil: { state in
            isDone() ? nil : Self.date(in: min(deadline, state.stopDeadline ?? .infinity) - Self.now())
        }) { _ in isDone() }
    }

    /// Whether `stop` was called and its deadline has passed.
    package var isPastStopDeadline: Bool {
        state.withLock { $0.stopDeadline.map { Self.now() >= $0 } ?? false }
    }

    /// Reads state that `notify` writes.
    package func synchronized<T>(_ body: () -> T) -> T {
        state.withLock { _ in body() }
    }

    /// Runs `change` under the channel's lock and wakes a `wait`.
    package func notify(_ change: () -> Void) {
        state.withLock { _ in change() }
        state.broadcast()
    }

    // MARK: Accounting, from the sink

    package func recordDelivered(_ count: Int) {
        state.withLock { $0.delivered += UInt64(count) }
    }

    /// Counts records the sink gave up on; `atStop` when `stop` ran out of time for them.
    package func recordDropped(_ count: Int, atStop: Bool = false) {
        state.withLock { state in
            state.dropped += UInt64(count)
            if atStop { state.droppedAtStop = true }
        }
    }

    /// Counts a failed attempt and keeps its description; returns how many failed so far.
    @discardableResult
    package func recordFailure(_ description: String) -> UInt64 {
        state.withLock { state in
            state.failedAttempts += 1
            state.lastError = description
            return state.failedAttempts
        }
    }
}
