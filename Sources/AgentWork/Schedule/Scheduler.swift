import AgentLoop
import Foundation
import JSONSchema
import Logging

/// Fires the settings' schedules: runs of their task at their times, with what the agent owes
/// for times it missed (``ScheduleDefinition/CatchUp``), what a fire does while the previous
/// run still goes (``ScheduleDefinition/Overlap``), jitter, pause and resume, run now, and a
/// history of every fire time.
///
/// Loop thread only. One ``ScheduleTimer`` (a CLOCK_REALTIME timerfd in the supervisor's loop)
/// wakes it at the earliest due fire; a step of the wall clock wakes it too, and every next
/// time is recomputed. A fire's run request, the schedule's new state and the history lines
/// are committed together (``ScheduleStore/commit(_:done:)``) BEFORE the run is handed to the
/// ``TaskCoordinator``: after a crash, a fire time is either recorded with its run (which the
/// coordinator recovers) or not at all (and is owed, per `catch_up`) — never both, never twice.
///
/// So that the commit does not delay the runs, a fire on time is decided and committed
/// ``lead`` ahead of its instant, and its runs are released at the instant by the same timer
/// (see Scheduler+Ahead.swift): the fires of one instant share one transaction and reach the
/// coordinator together.
@LoopActor
package final class Scheduler {
    /// A schedule and where it stands.
    package struct Entry {
        package var definition: ScheduleDefinition
        package var state: ScheduleState
        /// When the timer wakes for it: the next fire time plus its jitter (nil: not armed).
        package var dueAt: Double?
        /// Fire times over the agent's life: run, missed, skipped (the metrics).
        package var fired = 0
        package var missed = 0
        package var skipped = 0
        /// The due time for which deciding ahead was declined (the previous run still going):
        /// the timer wakes for it at the due time itself.
        package var declinedAhead: Double?
    }

    /// Why the schedules are looked at.
    package enum Occasion: Equatable {
        /// The timer expired: the newest due time is on time.
        case timer
        /// The agent started: every due time passed while it was not running.
        case start
        /// The wall clock was set forward by this many seconds (at most ``clockCorrection``).
        case clockStep(Double)
        /// On time, decided ``lead`` ahead: the runs are released at `now`, the instant evaluated.
        case ahead
    }

    /// A change of the wall clock larger than this (3 hours) is a clock correction, not a
    /// daylight-saving-like jump: the times it skips are not caught up, and a schedule whose
    /// last fire lies this far in the future starts over from now.
    nonisolated package static let clockCorrection: Double = 3 * 3600

    package let loop: EventLoop
    package let store: (any ScheduleStore)?
    package let tasks: TaskCoordinator
    /// The workflows, for schedules that start them (`"run": {"workflow": …}`).
    package weak var workflows: WorkflowEngine?
    package let logger: Logger
    /// The wall clock (injected by tests).
    package var clock: () -> Double = ScheduleTimer.wallClock
    /// A random delay in 0...jitter (injected by tests).
    package var jitterDelay: (Double) -> Double = { $0 > 0 ? Double.random(in: 0...$0) : 0 }
    /// Announces a fire, a miss or a skip on the event bus: (event type, payload).
    package var publish: (RuntimeEvent, JSONObject) -> Void = { _, _ in }

    package var entries: [String: Entry] = [:]
    package var timer: ScheduleTimer?
    package private(set) var stopping = false
    /// Runs committed by a fire but not yet handed to the coordinator: they count as going.
    package var inFlight: Set<String> = []
    /// Runs decided ahead: when each is released (by run id), until it is handed over.
    package var releaseTimes: [String: Double] = [:]
    /// Runs decided ahead and committed, waiting for their instant.
    package var parked: [TaskRun] = []
    /// Commits handed to the store and not confirmed yet.
    package private(set) var commitsInFlight = 0
    /// History lines kept in memory (the newest ``recentLimit``): `schedule history` without a store.
    package private(set) var recentHistory: [ScheduleHistoryEntry] = []
    package let recentLimit = 1_000
    /// Fire times computed one by one (cron steps) over the agent's life: what finding the
    /// due and missed times cost, which does not grow with how many there are.
    package var computedFireTimes = 0
    /// In a fleet: whether this agent may fire (it holds the schedules' leadership), and the
    /// settings' schedules, kept while it does not (``Scheduler+Fleet``).
    package var inFleet = false
    package var leadership: Leadership?
    package var fleetDefinitions: [ScheduleDefinition] = []

    package init(loop: EventLoop, store: (any ScheduleStore)?, tasks: TaskCoordinator, logger: Logger, useTimer: Bool = true) {
        self.loop = loop
        self.store = store
        self.tasks = tasks
        self.logger = logger
        if useTimer {
            timer = ScheduleTimer(loop: loop, expired: { [weak self] in self?.timerExpired() },
                                  stepped: { [weak self] step in self?.clockStepped(by: step) })
            if timer == nil { logger.error("schedules: cannot create the timer (timerfd_create: \(String(cString: strerror(errno)))); no schedule fires") }
        }
    }

    // MARK: Start, reload, stop

    /// Takes the settings' schedules and their saved states at the agent's start: fire times
    /// missed while the agent was down are dealt with per `catch_up`, `@reboot` schedules fire.
    package func start(_ definitions: [ScheduleDefinition], saved: [String: ScheduleState]) {
        let now = clock()
        var commit = ScheduleCommit()
        for definition in definitions {
            var state = saved[definition.name] ?? ScheduleState(name: definition.name, through: now)
            if saved[definition.name] == nil { commit.states.append(state) }
            if state.through > now + Self.clockCorrection {
                logger.warning("schedule \(definition.name): its last fire time \(TaskRun.iso(state.through)) is in the future (the clock was set back); starting over from now")
                state.through = now
            }
            entries[definition.name] = Entry(definition: definition, state: state)
        }
        commit.removed = saved.keys.filter { entries[$0] == nil }.sorted()
        // Removed while the agent was down, with a fire waiting: said, as a removal at a reload says it.
        for name in commit.removed { dropWaiting(name, saved[name]?.waiting, now: now, into: &commit) }
        for name in entries.keys.sorted() {
            guard let entry = entries[name], entry.definition.enabled, !entry.state.paused else { continue }
            if entry.definition.timing.isReboot {
                fire(name, planned: now, count: 1, first: nil, reason: "the agent started", overlap: true, into: &commit)
            } else {
                evaluate(name, now: now, occasion: .start, into: &commit)
            }
        }
        for name in entries.keys { reschedule(name) }
        flush(commit)
        rearm()
        // `overlap: queue`: a fire that waited when the agent stopped waits on (or runs now).
        for (name, entry) in entries where entry.state.waiting != nil && entry.definition.enabled && !entry.state.paused {
            if let run = entry.state.lastRun, isGoing(run) {
                watch(run, for: name)
            } else {
                loop.schedule(after: 0) { [weak self] in self?.releaseWaiting(name) }
            }
        }
    }

    /// Takes the settings' schedules at a reload: new ones start from now, removed ones go,
    /// changed ones keep their history and state but owe nothing from before the change.
    package func apply(_ definitions: [ScheduleDefinition]) {
        if inFleet {
            fleetDefinitions = definitions
            guard leadership != nil else { return }
        }
        let now = clock()
        var commit = ScheduleCommit()
        let names = Set(definitions.map(\.name))
        for name in entries.keys where !names.contains(name) {
            dropWaiting(name, entries[name]?.state.waiting, now: now, into: &commit)
            entries[name] = nil
            commit.removed.append(name)
        }
        for definition in definitions {
            guard var entry = entries[definition.name] else {
                let state = ScheduleState(name: definition.name, through: now)
                entries[definition.name] = Entry(definition: definition, state: state)
                commit.states.append(state)
                reschedule(definition.name)
                continue
            }
            guard entry.definition != definition else { continue }
            let old = entry.definition
            entry.definition = definition
            if old.timing != definition.timing || old.timeZone != definition.timeZone || (!old.enabled && definition.enabled) {
                entry.state.through = max(entry.state.through, now)
                entry.state.next = nil
            }
            entries[definition.name] = entry
            reschedule(definition.name)
            commit.states.append(entries[definition.name]!.state)
        }
        flush(commit)
        rearm()
    }

    /// A removed schedule's fire that waited for the previous run goes with it: said, or its
    /// `waiting` line stayed the last word of the history (and the first of a schedule of that
    /// name added later).
    private func dropWaiting(_ name: String, _ waiting: Double?, now: Double, into commit: inout ScheduleCommit) {
        guard let waiting else { return }
        record(name, ScheduleHistoryEntry(schedule: name, planned: waiting, actual: now, outcome: .skipped,
                                          reason: "the schedule was removed while this fire waited (overlap queue)", count: 1), into: &commit)
    }

    /// The agent stops: nothing fires any more (fires committed but not yet handed over stay
    /// queued in the store for the next start).
    package func shutDown() {
        stopping = true
        timer?.arm(at: nil)
        timer = nil
    }

    /// Another agent leads the fleet's schedules: nothing fires here.
    package func stepDown() {
        leadership = nil
        entries = [:]
        timer?.arm(at: nil)
    }

    // MARK: The timer

    package func timerExpired() {
        guard !stopping else { return }
        let now = clock()
        releaseParked(now: now)
        var commit = ScheduleCommit()
        for name in entries.keys.sorted() {
            guard let dueAt = entries[name]?.dueAt, dueAt <= now else { continue }
            evaluate(name, now: now, occasion: .timer, into: &commit)
            reschedule(name)
        }
        flush(commit)
        decideAhead(now: now)
        rearm()
    }

    /// The wall clock was set (ECANCELED from the timer): every schedule's next time is
    /// recomputed. Forward by at most ``clockCorrection``: the times skipped are due now, as
    /// after a daylight-saving jump; further: a clock correction, they are recorded as missed.
    /// Backward: times already dealt with never run again; by more than ``clockCorrection``,
    /// schedules start over from now.
    package func clockStepped(by step: Double) {
        guard !stopping else { return }
        let now = clock()
        logger.notice("schedules: the wall clock was set \(step >= 0 ? "forward" : "back") by \(String(format: "%.3f", abs(step))) s; recomputing the fire times")
        releaseAllAhead()
        var commit = ScheduleCommit()
        for name in entries.keys.sorted() {
            guard var entry = entries[name] else { continue }
            if entry.state.through > now + Self.clockCorrection {
                entry.state.through = now
                entries[name] = entry
                commit.states.append(entry.state)
            }
            if entry.definition.enabled, !entry.state.paused, !entry.definition.timing.isReboot {
                if step > Self.clockCorrection {
                    miss(name, through: now, reason: "the wall clock was set forward by \(Int(step)) s (more than 3 hours: a clock correction, not caught up)", into: &commit)
                } else {
                    evaluate(name, now: now, occasion: step > 0 ? .clockStep(step) : .timer, into: &commit)
                }
            }
            entries[name]?.state.next = nil
            reschedule(name)
        }
        flush(commit)
        decideAhead(now: now)
        rearm()
    }

    /// Recomputes a schedule's next fire time (and its jitter) after `through`.
    package func reschedule(_ name: String) {
        guard var entry = entries[name] else { return }
        let definition = entry.definition
        let next = definition.timing.isReboot ? nil : definition.timing.nextFire(after: entry.state.through, in: definition.timeZone)
        if next != entry.state.next || entry.dueAt == nil {
            entry.state.next = next
            entry.dueAt = next.map { $0 + jitterDelay(definition.jitter) }
            entry.declinedAhead = nil
        }
        if !definition.enabled || entry.state.paused { entry.dueAt = nil }
        entries[name] = entry
    }

    // MARK: Fires

    /// Deals with every fire time of `name` in (through, now]: runs, folds, misses, skips.
    package func evaluate(_ name: String, now: Double, occasion: Occasion, into commit: inout ScheduleCommit) {
        guard let entry = entries[name] else { return }
        let definition = entry.definition
        var after = entry.state.through
        if let window = definition.catchUpWindow, now - window > after {
            miss(name, through: now - window, reason: "older than catch_up_window (\(Self.seconds(window)))", into: &commit)
            after = max(after, now - window)
        }
        let keep = definition.catchUp == .all ? definition.maxCatchUp + 1 : 2
        let due = definition.timing.fireTimes(after: after, through: now, in: definition.timeZone, keep: keep)
        computedFireTimes += due.computed
        guard due.count > 0, let newest = due.newest.last else { return }
        let why: String = switch occasion {
        case .start: "the agent was not running"
        case .timer, .ahead: "the agent was late"
        case .clockStep(let step): "the wall clock was set forward by \(Self.seconds(step))"
        }
        let onTime = occasion != .start
        // Decided ahead: the runs must not start before their instant, even recovered after a crash.
        let notBefore = occasion == .ahead ? now : nil
        switch definition.catchUp {
        case .none:
            let missed = onTime ? due.count - 1 : due.count
            if missed > 0 {
                let last = onTime ? due.newest.dropLast().last : newest
                record(name, ScheduleHistoryEntry(schedule: name, planned: last, actual: now, outcome: .missed,
                                                  reason: "\(why); catch_up none\(Self.inPart(due))", count: missed, firstPlanned: missed > 1 ? due.first : nil), into: &commit)
                entries[name]?.missed += missed
            }
            if onTime { fire(name, planned: newest, count: 1, first: nil, reason: nil, overlap: true, at: now, notBefore: notBefore, into: &commit) }
        case .one:
            let reason = due.count > 1 ? "\(due.capped ? "at least " : "")\(due.count) fire times folded into one run (\(why); catch_up one)"
                : (onTime ? nil : "\(why); caught up (catch_up one)")
            fire(name, planned: newest, count: due.count, first: due.count > 1 ? due.first : nil, reason: reason, overlap: true, at: now,
                 notBefore: notBefore, into: &commit)
        case .all:
            catchUpAll(name, due: due, why: why, onTime: onTime, now: now, notBefore: notBefore, into: &commit)
        }
        let through = max(entries[name]?.state.through ?? newest, newest)
        entries[name]?.state.through = through
        if let state = entries[name]?.state { commit.states.append(state) }
    }

    /// `catch_up: all`: the newest `max_catch_up` of the fire times `due` run, one run each;
    /// the older ones are recorded as missed, in one line.
    private func catchUpAll(_ name: String, due: ScheduleTiming.Due, why: String, onTime: Bool, now: Double, notBefore: Double?,
                            into commit: inout ScheduleCommit) {
        guard let definition = entries[name]?.definition else { return }
        let running = min(due.count, definition.maxCatchUp, due.newest.count)
        if due.count > running {
            let older = due.newest.count > running ? due.newest[due.newest.count - running - 1] : nil
            record(name, ScheduleHistoryEntry(schedule: name, planned: older, actual: now, outcome: .missed,
                                              reason: "\(why); beyond max_catch_up (\(definition.maxCatchUp))\(Self.inPart(due))",
                                              count: due.count - running, firstPlanned: due.first), into: &commit)
            entries[name]?.missed += due.count - running
        }
        let times = due.newest.suffix(running)
        // The times the agent owes run each; only a single on-time fire meets the overlap rule.
        let single = times.count == 1 && onTime
        for time in times {
            fire(name, planned: time, count: 1, first: nil, reason: single ? nil : "\(why); caught up (catch_up all)", overlap: single, at: now,
                 notBefore: notBefore, into: &commit)
        }
    }

    /// For a count that is a lower bound (``ScheduleTiming/Due/capped``): says so.
    nonisolated package static func inPart(_ due: ScheduleTiming.Due) -> String {
        due.capped ? "; at least \(due.count) fire times (not all counted)" : ""
    }

    /// Records every fire time of `name` in (through, `until`] as missed, and moves past them.
    private func miss(_ name: String, through until: Double, reason: String, into commit: inout ScheduleCommit) {
        guard let entry = entries[name], until > entry.state.through else { return }
        let definition = entry.definition
        let old = definition.timing.fireTimes(after: entry.state.through, through: until, in: definition.timeZone, keep: 1)
        computedFireTimes += old.computed
        if old.count > 0 {
            record(name, ScheduleHistoryEntry(schedule: name, planned: old.newest.last, actual: clock(), outcome: .missed, reason: reason + Self.inPart(old),
                                              count: old.count, firstPlanned: old.count > 1 ? old.first : nil), into: &commit)
            entries[name]?.missed += old.count
        }
        entries[name]?.state.through = until
        if let state = entries[name]?.state { commit.states.append(state) }
    }

    /// One fire of `name` for `planned` (nil: run now), standing for `count` fire times:
    /// a run, unless the overlap rule says otherwise. `at`: when it fires (default: now);
    /// `notBefore`: a fire decided ahead, whose run must not start before its instant.
    @discardableResult
    package func fire(_ name: String, planned: Double?, count: Int, first: Double?, reason: String?, overlap: Bool, at: Double? = nil,
              notBefore: Double? = nil, into commit: inout ScheduleCommit) -> TaskRun? {
        guard var entry = entries[name] else { return nil }
        let definition = entry.definition
        let now = at ?? clock()
        var reason = reason
        if overlap, let current = entry.state.lastRun, isGoing(current) {
            switch definition.overlap {
            case .skip:
                record(name, ScheduleHistoryEntry(schedule: name, planned: planned, actual: now, outcome: .skipped,
                                                  reason: "the previous run \(current) is still going (overlap skip)", count: count, firstPlanned: first), into: &commit)
                entries[name]?.skipped += count
                return nil
            case .queue:
                if entry.state.waiting != nil {
                    record(name, ScheduleHistoryEntry(schedule: name, planned: planned, actual: now, outcome: .skipped,
                                                      reason: "the previous run \(current) is still going and a fire already waits for it (overlap queue)", count: count, firstPlanned: first), into: &commit)
                    entries[name]?.skipped += count
                } else {
                    entries[name]?.state.waiting = planned ?? now
                    record(name, ScheduleHistoryEntry(schedule: name, planned: planned, actual: now, outcome: .waiting,
                                                      reason: "waits for the previous run \(current) to end (overlap queue)", count: count, firstPlanned: first), into: &commit)
                    watch(current, for: name)
                }
                if let state = entries[name]?.state { commit.states.append(state) }
                return nil
            case .replace:
                _ = tasks.cancel(current, why: "schedule \(name) fired again and replaces it (overlap replace)")
                reason = [reason, "replaces run \(current), cancelled (overlap replace)"].compactMap { $0 }.joined(separator: "; ")
            case .allow:
                break
            }
        }
        let runID: String
        var run: TaskRun?
        if let workflow = definition.workflow {
            guard let started = prepareWorkflowRun(workflow, input: definition.input) else {
                record(name, ScheduleHistoryEntry(schedule: name, planned: planned, actual: now, outcome: .skipped,
                                                  reason: "the workflow \(workflow) is not running in this agent", count: count, firstPlanned: first), into: &commit)
                entries[name]?.skipped += count
                return nil
            }
            commit.workflowRuns.append(started)
            runID = started.id
        } else {
            let prepared = tasks.prepare(task: definition.task, input: definition.input, priority: .normal, notBefore: notBefore, requestedBy: .schedule)
            commit.runs.append(prepared)
            if let notBefore { releaseTimes[prepared.id] = notBefore }
            runID = prepared.id
            run = prepared
        }
        inFlight.insert(runID)
        entry = entries[name] ?? entry
        entry.state.lastFire = planned ?? now
        entry.state.lastRun = runID
        entry.state.lastActual = now
        entry.fired += 1
        entries[name] = entry
        record(name, ScheduleHistoryEntry(schedule: name, planned: planned, actual: now, outcome: .fired, runID: runID, reason: reason,
                                          count: count, firstPlanned: first), into: &commit)
        commit.states.append(entry.state)
        return run
    }

    /// Whether run `id` is still going (queued, running, retrying, or committed and not yet handed over).
    package func isGoing(_ id: String) -> Bool {
        inFlight.contains(id) || tasks.knownRun(id).map { !$0.status.isFinished } == true || workflowRunIsGoing(id)
    }

    /// `overlap: queue`: when run `id` ends, the waiting fire of `name` runs.
    private func watch(_ id: String, for name: String) {
        let release: () -> Void = { [weak self] in
            guard let self, !stopping else { return }
            // After the coordinator (or engine) is done with the run that ended (whenFinished is called within it).
            loop.schedule(after: 0) { [weak self] in self?.releaseWaiting(name) }
        }
        if let workflows, workflows.known(id) != nil {
            workflows.whenFinished(id) { _, _ in release() }
        } else {
            tasks.whenFinished(id) { _ in release() }
        }
    }

    private func releaseWaiting(_ name: String) {
        guard !stopping, let waiting = entries[name]?.state.waiting else { return }
        entries[name]?.state.waiting = nil
        var commit = ScheduleCommit()
        fire(name, planned: waiting, count: 1, first: nil, reason: "waited for the previous run to end (overlap queue)", overlap: true, into: &commit)
        if let state = entries[name]?.state { commit.states.append(state) }
        flush(commit)
    }

    private func record(_ name: String, _ entry: ScheduleHistoryEntry, into commit: inout ScheduleCommit) {
        commit.history.append(entry)
        recentHistory.append(entry)
        if recentHistory.count > recentLimit * 2 { recentHistory.removeFirst(recentHistory.count - recentLimit) }
        var payload: JSONObject = ["schedule": .string(name), "count": .number(JSONNumber(entry.count))]
        if let planned = entry.planned { payload["planned"] = .string(TaskRun.iso(planned)) }
        if let first = entry.firstPlanned { payload["first_planned"] = .string(TaskRun.iso(first)) }
        if let run = entry.runID { payload["run_id"] = .string(run) }
        if let reason = entry.reason { payload["reason"] = .string(reason) }
        if let definition = entries[name]?.definition {
            if let workflow = definition.workflow { payload["workflow"] = .string(workflow) } else { payload["task"] = .string(definition.task) }
        }
        publish(.schedule(entry.outcome), payload)
    }

    /// Commits what an evaluation changed; its runs go to the coordinator once committed.
    /// `then` gets the runs on the loop after they were handed over.
    package func flush(_ commit: ScheduleCommit, then: (([TaskRun]) -> Void)? = nil) {
        guard !commit.isEmpty else {
            then?([])
            return
        }
        var commit = commit
        if inFleet {
            // Only under a leadership: the store refuses the commit whole if it has passed.
            guard let leadership else {
                then?([])
                return
            }
            commit.leader = leadership
        }
        let runs = commit.runs
        let workflowRuns = commit.workflowRuns
        guard let store else {
            // Evaluated whether or not `then` is given (an optional call skips its argument).
            let handed = committed(runs, true)
            handOver(workflowRuns)
            then?(handed)
            return
        }
        commitsInFlight += 1
        let after = LoopOwned(then)
        let inbox = loop.inbox
        store.commit(commit) { committed in
            inbox.post {
                self.commitsInFlight -= 1
                let handed = self.committed(runs, committed)
                self.handOver(workflowRuns)
                after.value?(handed)
            }
        }
    }

    /// The runs of a commit, once it is done: to the coordinator, except those decided ahead
    /// whose instant has not come (parked until the timer releases them) and whose runner
    /// does not hold a run until its instant (a module executor does: those go now).
    private func committed(_ runs: [TaskRun], _ committed: Bool) -> [TaskRun] {
        if inFleet {
            // The runs are in the shared queue with the commit (any agent may take them, not
            // before their instant), or, refused, they are not anywhere: the next leader owes
            // those fire times.
            for run in runs {
                inFlight.remove(run.id)
                releaseTimes.removeValue(forKey: run.id)
            }
            if !committed {
                if !runs.isEmpty { logger.warning("schedules: \(runs.count) fire(s) not recorded (the fleet's leadership passed, or the database is away); the leader owes them") }
                return []
            }
            tasks.claimShared()
            return runs
        }
        if !committed, !runs.isEmpty {
            logger.error("schedules: \(runs.count) fire(s) could not be recorded in the store; running them anyway (a crash now could run them again)")
        }
        let now = clock()
        var due: [TaskRun] = []
        for run in runs {
            // A run its runner holds until the instant goes now (the worker starts it then).
            if let at = releaseTimes[run.id], at > now, !stopping, !tasks.startsAhead(run) {
                parked.append(run)
            } else {
                due.append(run)
            }
        }
        if due.count < runs.count { rearm() }
        return handOver(due)
    }

    /// Hands runs to the coordinator, all in one pass (one dispatch per task, the frames to
    /// an executor in one write). A run decided ahead loses its not-before when released on
    /// time (the timer woke at its instant; the coordinator's own timers are coarser).
    package func handOver(_ runs: [TaskRun]) -> [TaskRun] {
        var ready: [TaskRun] = []
        for var run in runs {
            inFlight.remove(run.id)
            if let at = releaseTimes.removeValue(forKey: run.id), at <= clock() + Self.tolerance { run.notBefore = nil }
            // Stopping: the committed run stays queued in the store for the next start.
            guard !stopping else { continue }
            ready.append(run)
        }
        return ready.isEmpty ? [] : tasks.submit(ready)
    }

    nonisolated package static func seconds(_ value: Double) -> String {
        value.rounded() == value && abs(value) < 1e15 ? "\(Int(value)) s" : String(format: "%.3f s", value)
    }
}
