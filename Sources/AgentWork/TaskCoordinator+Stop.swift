import AgentLoop
import AgentSupervision

/// The agent's stop: running attempts asked to end within their grace, then recorded as
/// interrupted, to run again at the next start.
extension TaskCoordinator {
    /// The agent stops. Queued runs stay queued. Each running attempt is cancelled with its
    /// task's grace (a command gets SIGTERM, then SIGKILL after `cancel_grace`; a handler is
    /// cancelled) and, once ended, recorded as interrupted: the run waits as `retrying` for
    /// the next start, which runs it again (with the next attempt number, not counted against
    /// its retry policy; see ``recordInterrupted(_:attempt:)``). No notification is sent for
    /// it: the operator stopped the agent, the work did not fail.
    /// ``hasRunsGoing`` says when every attempt has ended; ``endStop()`` ends what is left
    /// at once (the grace's deadline, or a second signal).
    package func shutDown() {
        guard !stopping else { return }
        stopping = true
        if let timer = delayTimer { loop.cancel(timer.id) }
        delayTimer = nil
        var longest = 0.0
        for (id, var attempt) in active {
            if let timer = attempt.timeoutTimer { loop.cancel(timer) }
            attempt.timeoutTimer = nil
            active[id] = attempt
            longest = max(longest, attempt.definition.cancelGrace ?? Self.defaultGrace)
        }
        for (id, attempt) in active.sorted(by: { $0.key < $1.key }) {
            attempt.runner.cancel(runID: id, reason: .interrupted)
        }
        if active.isEmpty {
            endStop()
        } else {
            logger.notice("tasks: \(active.count) running run(s) asked to end (at most \(ProcessPolicy.format(longest)) s); each runs again at the next start")
            // A runner that never answers does not hold the stop up for ever.
            stopDeadline = loop.schedule(after: longest + 3) { [weak self] in
                self?.stopDeadline = nil
                self?.endStop()
            }
        }
    }

    /// Whether attempts are still ending after ``shutDown()`` (the agent waits for them).
    package var hasRunsGoing: Bool { stopping && !stopEnded }

    /// Ends the stop now: what is still running is killed by its runner (recorded as
    /// interrupted like the rest), and requests waiting for a run are answered.
    package func endStop() {
        guard stopping, !stopEnded else { return }
        stopEnded = true
        if let stopDeadline { loop.cancel(stopDeadline) }
        stopDeadline = nil
        var seen = Set<ObjectIdentifier>()
        for runner in Array(runners.values) + [moduleRunner].compactMap({ $0 }) where seen.insert(ObjectIdentifier(runner)).inserted {
            runner.shutDown()
        }
        // A runner that reported nothing for a run: it is recorded as interrupted all the same.
        for (id, attempt) in active {
            guard let run = runs[id] else { continue }
            recordInterrupted(run, attempt: attempt)
        }
        active = [:]
        for (id, list) in waiters {
            let run = runs[id] ?? recent[id]
            for done in list { if let run { done(run) } }
        }
        waiters = [:]
    }

    /// Seconds a running attempt gets at the stop when its task gives no `cancel_grace` (the
    /// longer of the runners' defaults).
    nonisolated package static let defaultGrace = 5.0
}
