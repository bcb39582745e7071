import Foundation
import JSONSchema

/// Where schedules keep what must outlive the agent: each schedule's state and its history.
/// The embedded SQLite store (``SQLiteScheduleStore``) for one agent, or PostgreSQL shared by
/// a fleet (`PostgresScheduleStore` in AgentFleet); one conformance suite for both.
///
/// ``commit(_:done:)`` is the heart of it: a fire's run request, the schedule's new state and
/// the history lines are written in ONE transaction, so that after a crash either all of them
/// are there or none is: a fire time is never run twice, nor lost without a trace. In a fleet
/// only the leader fires (``lead(holder:lease:)``), and a commit made under a leadership that
/// has since passed to another agent is refused whole.
package protocol ScheduleStore: AnyObject, Sendable {
    /// Commits `change` in one transaction (after what was handed over before), then calls
    /// `done` (on any thread) with whether it was written. Returns at once (loop).
    func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void)
    /// Every schedule's saved state, by name.
    func loadStates() async throws -> [String: ScheduleState]
    /// A schedule's history, newest first.
    func history(schedule: String, limit: Int) async throws -> [ScheduleHistoryEntry]
    /// Deletes history lines (of every schedule) written before `before` (nil: no age limit) and
    /// all but the newest `keeping` (nil: no count limit). Returns how many went.
    @discardableResult
    func pruneHistory(before: Double?, keeping: Int?) async throws -> Int
    /// Takes or renews the schedules' leadership for `lease` seconds: the leadership if
    /// `holder` has it now (a new fence when it changed hands), nil while another holder's
    /// lease runs.
    func lead(holder: String, lease: Double) async throws -> Leadership?
    /// Who holds the schedules' leadership now (nil: nobody, or a store of one agent), for
    /// `schedule list` on every agent of a fleet.
    func currentLeader() async throws -> Leadership?
}

extension ScheduleStore {
    package func currentLeader() async throws -> Leadership? { nil }
}

/// The right to fire the schedules, held by one agent of a fleet until ``until``.
package struct Leadership: Sendable, Equatable {
    package var holder: String
    /// Higher at every change of hands: commits carry it, and an older one is refused.
    package var fence: Int64
    package var until: Double

    package init(holder: String, fence: Int64, until: Double) {
        self.holder = holder
        self.fence = fence
        self.until = until
    }
}

/// What one evaluation of the schedules changes, written together.
package struct ScheduleCommit: Sendable {
    package var states: [ScheduleState] = []
    package var history: [ScheduleHistoryEntry] = []
    /// Runs requested by the fires, as queued (the coordinator starts them once committed).
    package var runs: [TaskRun] = []
    /// Workflow runs started by the fires, as they begin (the engine takes them once committed).
    /// In a fleet each carries the leader's claim (``WorkflowRun/claim``).
    package var workflowRuns: [WorkflowRun] = []
    /// Schedules gone from the settings: their state is forgotten (their history stays).
    package var removed: [String] = []
    /// The leadership the change was made under (a fleet); nil: this agent alone fires.
    package var leader: Leadership?

    package init(states: [ScheduleState] = [], history: [ScheduleHistoryEntry] = [], runs: [TaskRun] = [], removed: [String] = [],
                 leader: Leadership? = nil) {
        self.states = states
        self.history = history
        self.runs = runs
        self.removed = removed
        self.leader = leader
    }

    package var isEmpty: Bool { states.isEmpty && history.isEmpty && runs.isEmpty && workflowRuns.isEmpty && removed.isEmpty }
}

/// What a schedule remembers across restarts.
package struct ScheduleState: Sendable, Equatable {
    package var name: String
    /// Every fire time up to this instant has been dealt with (fired, folded, missed or
    /// skipped): a fire time at or before it never runs again. Set to the time the schedule
    /// was first seen, so that a new schedule owes nothing from before it existed.
    package var through: Double
    /// The next planned fire time, as last computed (shown; recomputed at start).
    package var next: Double?
    package var paused = false
    /// The planned time and run of the last fire that ran.
    package var lastFire: Double?
    package var lastRun: String?
    /// When that run was requested.
    package var lastActual: Double?
    /// `overlap: queue`: the planned time of the fire waiting for ``lastRun`` to end.
    package var waiting: Double?

    package var json: JSONValue {
        var object: JSONObject = ["name": .string(name), "through": .number(JSONNumber(through)), "paused": .bool(paused)]
        if let next { object["next"] = .number(JSONNumber(next)) }
        if let lastFire { object["last_fire"] = .number(JSONNumber(lastFire)) }
        if let lastRun { object["last_run"] = .string(lastRun) }
        if let lastActual { object["last_actual"] = .number(JSONNumber(lastActual)) }
        if let waiting { object["waiting"] = .number(JSONNumber(waiting)) }
        return .object(object)
    }

    package init(name: String, through: Double) {
        self.name = name
        self.through = through
    }

    /// Reads what ``json`` wrote; nil when it is not that (an edited store).
    package init?(stored value: JSONValue) {
        guard let name = value["name"]?.stringValue, let through = value["through"]?.numberValue?.doubleValue else { return nil }
        self.init(name: name, through: through)
        next = value["next"]?.numberValue?.doubleValue
        paused = value["paused"]?.boolValue ?? false
        lastFire = value["last_fire"]?.numberValue?.doubleValue
        lastRun = value["last_run"]?.stringValue
        lastActual = value["last_actual"]?.numberValue?.doubleValue
        waiting = value["waiting"]?.numberValue?.doubleValue
    }
}

/// One line of a schedule's history: a fire (and its run), or fire times missed or skipped,
/// with the reason.
package struct ScheduleHistoryEntry: Sendable, Equatable {
    package enum Outcome: String, Sendable, CaseIterable {
        /// A run was requested (``runID``).
        case fired
        /// The fire times were not run: the agent was not running, was late, or the clock jumped.
        case missed
        /// Not run because of the schedule's state: the previous run still going, paused.
        case skipped
        /// `overlap: queue`: the fire waits for the previous run to end.
        case waiting
    }

    package var schedule: String
    /// The planned fire time (the newest, when the line stands for several); nil: run now.
    package var planned: Double?
    /// When it was dealt with.
    package var actual: Double
    package var outcome: Outcome
    package var runID: String?
    package var reason: String?
    /// Fire times this line stands for (a catch-up folds several into one run).
    package var count = 1
    /// The earliest of them, when there are several.
    package var firstPlanned: Double?

    package init(schedule: String, planned: Double?, actual: Double, outcome: Outcome, runID: String? = nil, reason: String? = nil,
                 count: Int = 1, firstPlanned: Double? = nil) {
        self.schedule = schedule
        self.planned = planned
        self.actual = actual
        self.outcome = outcome
        self.runID = runID
        self.reason = reason
        self.count = count
        self.firstPlanned = firstPlanned
    }

    /// As the commands show it (`result`: the run's status — a task run's or a workflow run's —,
    /// when known; planned times local to `zone`).
    package func json(result: String? = nil, zone: TimeZone = TimeZone(identifier: "UTC")!) -> JSONValue {
        var object: JSONObject = ["schedule": .string(schedule), "actual": .string(TaskRun.iso(actual)), "outcome": .string(outcome.rawValue),
                                  "count": .number(JSONNumber(count))]
        if let planned { object["planned"] = .string(Scheduler.local(planned, in: zone)) }
        if let firstPlanned { object["first_planned"] = .string(Scheduler.local(firstPlanned, in: zone)) }
        if let runID { object["run_id"] = .string(runID) }
        if let reason { object["reason"] = .string(reason) }
        if let result { object["result"] = .string(result) }
        if let planned, outcome == .fired { object["lateness"] = .number(JSONNumber(((actual - planned) * 1e6).rounded() / 1e6)) }
        return .object(object)
    }

    /// The record as the SQLite store keeps it (times as numbers).
    package var storedJSON: JSONValue {
        var object: JSONObject = ["count": .number(JSONNumber(count))]
        if let reason { object["reason"] = .string(reason) }
        if let firstPlanned { object["first_planned"] = .number(JSONNumber(firstPlanned)) }
        return .object(object)
    }
}
