import AgentLoop
import Foundation

/// Attempts interrupted from outside the work: the agent stopped (``recordInterrupted(_:attempt:)``)
/// or died (found `running` at the next start, ``recover(_:)``), or a declared executor's
/// worker died during the run. Such an attempt is not the work's fault and not an attempt of
/// the task's retry policy: the run counts it in ``TaskRun/interruptions`` and runs again at
/// once — at the next start when the agent stopped — until one attempt completes. Past the
/// task's `max_interruptions` it ends `abandoned`, a status of its own, so that a run the
/// agent gave up on is never mistaken for work that failed.
extension TaskCoordinator {
    /// An attempt interrupted while the agent runs on (or found interrupted at its start): the
    /// run is due again at once, or abandoned past its bound.
    package func interrupted(_ run: TaskRun, definition: TaskDefinition, outcome: TaskRunOutcome) {
        var run = run
        run.interruptions += 1
        if run.interruptions > definition.maxInterruptions { return abandon(run, definition: definition, outcome: outcome) }
        awaitRetry(run, due: Self.placeAgain(run), definition: definition, outcome: outcome)
    }

    /// When an interrupted attempt's run is due again: at once, in the place in the queue it
    /// had (its not-before or its arrival while no attempt of it has completed — every one was
    /// interrupted, ``TaskRun/interruptions`` counted already —, else its retry's start), not
    /// behind the runs that came while it ran.
    nonisolated static func placeAgain(_ run: TaskRun) -> Double {
        let now = Date().timeIntervalSince1970
        let place = run.attempt - run.interruptions <= 0 ? run.notBefore ?? run.queuedAt : run.startedAt ?? now
        return min(place, now)
    }

    /// An attempt the agent's stop ended: the run waits as `retrying` for the next start (it
    /// is due at once then), or is abandoned past its bound. Counted, announced, never
    /// notified (but an abandonment, which ends the run).
    package func recordInterrupted(_ run: TaskRun, attempt: Active) {
        var run = run
        if attempt.startedMonotonic > EventLoop.now() {
            // Sent ahead and its instant not come: it never started, and waits for it as before.
            run.attempt -= 1
            run.status = .queued
            run.startedAt = nil
            run.executor = nil
            run.attemptRecord = nil
            runs[run.id] = run
            record(run, event: .taskQueued)
            return
        }
        countAttempt(attempt.definition.name, .interrupted)
        run.interruptions += 1
        run.executionTime = EventLoop.now() - attempt.startedMonotonic
        if run.interruptions > attempt.definition.maxInterruptions {
            let outcome = TaskRunOutcome(status: .interrupted, error: "interrupted: the agent stopped while attempt \(run.attempt) ran")
            interruptAttemptRecord(&run, outcome.error ?? "")
            return abandon(run, definition: attempt.definition, outcome: outcome)
        }
        run.status = .retrying
        run.error = "interrupted: the agent stopped while attempt \(run.attempt) ran; it runs again at the next start"
        interruptAttemptRecord(&run, run.error ?? "")
        run.nextAttemptAt = Self.placeAgain(run)
        runs[run.id] = run
        record(run, event: .taskInterrupted)
        if shared != nil { release(run.id) }
    }

    /// Ends a run interrupted more often than its task allows: `abandoned`, with an error that
    /// says how often and which setting raises the bound. Notified as a failure.
    package func abandon(_ run: TaskRun, definition: TaskDefinition, outcome: TaskRunOutcome) {
        abandonedRuns[definition.name, default: 0] += 1
        let error = Self.abandonment(run, definition: definition, last: outcome.error)
        logger.warning("task run \(run.id) (\(definition.name)): \(error)")
        let finished = finish(run.id, run, status: .abandoned, error: error)
        var told = outcome
        told.error = error
        attemptEnded(AttemptEnd(task: definition, run: finished, outcome: told, retryFollows: false))
    }

    /// The error of an abandoned run.
    nonisolated package static func abandonment(_ run: TaskRun, definition: TaskDefinition, last: String?) -> String {
        let times = run.interruptions == 1 ? "once" : "\(run.interruptions) times"
        return "abandoned: interrupted \(times) (the agent stopped or died, or its executor's worker died, while an attempt ran; "
            + "the last: \(last ?? "attempt \(run.attempt)")), more than the task's max_interruptions (\(definition.maxInterruptions)) allows; "
            + "raise \"max_interruptions\" of tasks.\(definition.name) in the settings to let such a run go on, "
            + "or run it again with agent-control task rerun \(run.id)"
    }

    /// A run claimed from the fleet's queue whose earlier holders died while it ran more often
    /// than its task allows: abandoned instead of started. True when it was.
    package func abandonsClaimed(_ run: TaskRun, definition: TaskDefinition) -> Bool {
        guard run.interruptions > definition.maxInterruptions else { return false }
        var run = run
        // The claim began no attempt: the last is the one interrupted.
        run.attempt -= 1
        let outcome = TaskRunOutcome(status: .interrupted, error: "the agent holding attempt \(run.attempt) stopped answering")
        // Its holder never wrote its end: shown interrupted (``TaskAttempt/shown(_:of:)``).
        run.attemptRecord = nil
        runs[run.id] = run
        abandon(run, definition: definition, outcome: outcome)
        return true
    }
}
