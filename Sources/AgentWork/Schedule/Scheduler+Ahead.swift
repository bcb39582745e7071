import Foundation

/// Fires decided ahead: a fire on time is evaluated and committed (its run request, the
/// schedule's state and history, in one transaction as every fire) ``lead`` before its instant,
/// and its run is released to the coordinator AT the instant by the timer. A fire's run still
/// starts only once its commit is done — a fire never runs twice across a crash — but the
/// commit's latency is no longer between the instant and the run. A run committed ahead carries
/// its instant as not-before, so that a run recovered after a crash never starts early either.
///
/// A schedule whose previous run is still going when its fire would be decided ahead (and
/// whose overlap is not `allow`) is decided at its instant as before: the overlap rule sees
/// the run as it stands then; so is a schedule that starts a workflow. A pause, a run now or a reload that comes within the lead
/// takes effect after the fire already decided.
extension Scheduler {
    /// How long before its instant a fire on time is decided and committed: enough for the
    /// store's writer to commit it on a busy machine (a commit of 100 fires takes about a
    /// millisecond on a quiet one).
    nonisolated package static let lead: Double = 0.05

    /// The timer's tolerance: a time this close to the clock is due (the timerfd expires at
    /// the nanosecond, which a Double of seconds cannot always show).
    nonisolated package static let tolerance: Double = 1e-6

    /// Decides the fires due within ``lead`` of `now` that may be decided ahead, in one commit.
    package func decideAhead(now: Double) {
        guard !stopping else { return }
        var commit = ScheduleCommit()
        for name in entries.keys.sorted() {
            guard let entry = entries[name], let dueAt = entry.dueAt, dueAt > now + Self.tolerance, dueAt - Self.lead <= now,
                  entry.declinedAhead != dueAt else { continue }
            guard mayDecideAhead(entry) else {
                entries[name]?.declinedAhead = dueAt
                continue
            }
            evaluate(name, now: dueAt, occasion: .ahead, into: &commit)
            reschedule(name)
        }
        flush(commit)
    }

    /// Whether a fire of `entry` decided now is the one its instant would decide: nothing of
    /// the schedule is going or waiting that the overlap rule would look at.
    package func mayDecideAhead(_ entry: Entry) -> Bool {
        guard entry.definition.enabled, !entry.state.paused, !entry.definition.timing.isReboot, entry.state.waiting == nil,
              entry.definition.workflow == nil else { return false }
        if entry.definition.overlap == .allow { return true }
        return entry.state.lastRun.map(isGoing) != true
    }

    /// Hands over the parked runs whose instant has come.
    package func releaseParked(now: Double) {
        guard !parked.isEmpty else { return }
        var due: [TaskRun] = []
        var later: [TaskRun] = []
        for run in parked {
            if (releaseTimes[run.id] ?? 0) <= now + Self.tolerance { due.append(run) } else { later.append(run) }
        }
        parked = later
        if !due.isEmpty { _ = handOver(due) }
    }

    /// The wall clock stepped: the instants the runs decided ahead wait for are not where
    /// they were. They go to the coordinator now (parked ones at once, those still being
    /// committed once committed) with their instant as not-before: started at once when it
    /// has passed, held by the coordinator until it comes when the clock went back.
    package func releaseAllAhead() {
        let runs = parked
        parked = []
        releaseTimes = [:]
        if !runs.isEmpty { _ = handOver(runs) }
    }

    /// Arms the timer for what comes first: a parked run's instant, a fire to decide ahead, or
    /// (declined ahead, or late) a due fire.
    package func rearm() {
        guard !stopping else { return }
        var earliest = parked.compactMap { releaseTimes[$0.id] }.min()
        for entry in entries.values {
            guard let dueAt = entry.dueAt else { continue }
            let wake = entry.declinedAhead == dueAt ? dueAt : dueAt - Self.lead
            earliest = min(earliest ?? wake, wake)
        }
        timer?.arm(at: earliest)
    }
}
