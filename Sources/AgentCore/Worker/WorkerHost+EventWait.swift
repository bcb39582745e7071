import AgentModuleABI
import Foundation
import Glibc

/// `wait_events` and `wake_events_wait`, and a blocking receive's sleep: a thread of the worker
/// that waits for deliveries sleeps on the delivery ring's own word, which the supervisor's
/// publish wakes (no `wake` frame, no reader thread in between); the reader thread wakes it
/// for what comes on the socket and for the stop.
extension WorkerHost {
    /// wait_events: until a receive would find events, a stop, a wake or the timeout. With a
    /// ring the thread sleeps on the ring's own word, so that the supervisor's publish wakes it
    /// directly; the reader thread wakes it for what comes on the socket and for the stop.
    /// `receiveLock` is taken to look, never waited for: a receive on another thread goes on.
    func waitForEvents(timeoutMilliseconds: Int64) -> Int32 {
        defer { ringReceiver?.cancelWait() }
        // A timeout too long for nanoseconds is none.
        let span = timeoutMilliseconds.multipliedReportingOverflow(by: 1_000_000)
        let deadline = timeoutMilliseconds < 0 || span.overflow ? nil : TaskExecutor.nanoseconds(CLOCK_MONOTONIC) &+ span.partialValue
        while true {
            if receivable() { return Int32(AGENT_OK) }
            if let outcome = waitOutcome(consumingWake: true) { return outcome }
            let left = deadline.map { $0 - TaskExecutor.nanoseconds(CLOCK_MONOTONIC) } ?? -1
            if deadline != nil, left <= 0 { return Int32(AGENT_TIMEOUT) }
            if let ringReceiver {
                // Raised before the last look: a publish or a wake after it finds the word raised.
                ringReceiver.announceSleep()
                guard !receivable(), waitOutcome(consumingWake: false) == nil else { continue }
                ringReceiver.sleep(timeoutNanoseconds: left)
            } else {
                lock.lock()
                if waitOutcome(consumingWake: false, locked: true) == nil {
                    if deadline == nil { lock.wait() } else { _ = lock.wait(untilSaturated: Date(timeIntervalSinceNow: Double(left) / 1e9)) }
                }
                lock.unlock()
            }
        }
    }

    /// Whether a receive would find events now (the ring's or the socket's, not yet handed out).
    /// False while another thread receives: what there is is that receive's to take (a blocking
    /// one holds the lock while it sleeps, and must not hold this wait up too).
    private func receivable() -> Bool {
        guard receiveLock.try() else { return false }
        defer { receiveLock.unlock() }
        return ringReceiver?.hasBatch == true || inbox.hasTaken || ringReceiver?.hasPublished == true
    }

    /// What ends a wait besides the ring: socket deliveries, the stop, a wake (consumed when
    /// asked). Nil: nothing yet.
    private func waitOutcome(consumingWake: Bool, locked: Bool = false) -> Int32? {
        if !locked { lock.lock() }
        defer { if !locked { lock.unlock() } }
        if inbox.publishedCount > 0 { return Int32(AGENT_OK) }
        if stopRequested { return Int32(AGENT_STOPPED) }
        guard eventsWaitWoken else { return nil }
        if consumingWake { eventsWaitWoken = false }
        return Int32(AGENT_TIMEOUT)
    }

    /// wake_events_wait: ends the current `wait_events`, or else the next one.
    func wakeEventsWait() {
        lock.lock()
        eventsWaitWoken = true
        lock.broadcast()
        lock.unlock()
        ringReceiver?.wakeSleeper()
    }

    /// A blocking receive's sleep on the ring's word: the supervisor's publish wakes this
    /// thread itself, the reader thread for a delivery on the socket and for the stop. False
    /// once `deadline` has passed; true to look again.
    func sleepOnRing(_ ringReceiver: RingReceiver, until deadline: Date?) -> Bool {
        ringReceiver.announceSleep()
        lock.lock()
        let pending = inbox.publishedCount > 0 || stopRequested
        lock.unlock()
        if pending || ringReceiver.hasPublished { return true }
        // Beyond some centuries a deadline is none (nanoseconds would not hold it).
        let seconds = deadline?.timeIntervalSinceNow ?? .infinity
        guard seconds > 0 else {
            ringReceiver.cancelWait()
            return false
        }
        ringReceiver.sleep(timeoutNanoseconds: seconds < 9e9 ? Int64(seconds * 1e9) : -1)
        return true
    }
}
