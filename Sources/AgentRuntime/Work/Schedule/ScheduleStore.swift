import Foundation
import JSONSchema

/// Where schedules keep what must outlive the agent: each schedule's state and its history.
/// The embedded SQLite store (``SQLiteScheduleStore``) for one agent; a shared database for a
/// fleet later. Kept narrow, next to ``RunStore``.
///
/// ``commit(_:done:)`` is the heart of it: a fire's run request, the schedule's new state and
/// the history lines are written in ONE transaction, so that after a crash either all of them
/// are there or none is: a fire time is never run twice, nor lost without a trace.
protocol ScheduleStore: AnyObject, Sendable {
    /// Commits `change` in one transaction (after what was handed over before), then calls
    /// `done` (on any thread) with whether it was written. Returns at once (loop).
    func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void)
    /// Every schedule's saved state, by name.
    func loadStates() throws -> [String: ScheduleState]
    /// A schedule's history, newest first.
    func history(schedule: String, limit: Int) throws -> [ScheduleHistoryEntry]
}

/// What one evaluation of the schedules changes, written together.
struct ScheduleCommit: Sendable {
    var states: [ScheduleState] = []
    var history: [ScheduleHistoryEntry] = []
    /// Runs requested by the fires, as queued (the coordinator starts them once committed).
    var runs: [TaskRun] = []
    /// Workflow runs started by the fires, as they begin (the engine takes them once committed).
    var workflowRuns: [WorkflowRun] = []
    /// Schedules gone from the settings: their state is forgotten (their history stays).
    var removed: [String] = []

    var isEmpty: Bool { states.isEmpty && history.isEmpty && runs.isEmpty && workflowRuns.isEmpty && removed.isEmpty }
}

/// What a schedule remembers across restarts.
struct ScheduleState: Sendable, Equatable {
    var name: String
    /// Every fire time up to this instant has been dealt with (fired, folded, missed or
    /// skipped): a fire time at or before it never runs again. Set to the time the schedule
    /// was first seen, so that a new schedule owes nothing from before it existed.
    var through: Double
    /// The next planned fire time, as last computed (shown; recomputed at start).
    var next: Double?
    var paused = false
    /// The planned time and run of the last fire that ran.
    var lastFire: Double?
    var lastRun: String?
    /// When that run was requested.
    var lastActual: Double?
    /// `overlap: queue`: the planned time of the fire waiting for ``lastRun`` to end.
    var waiting: Double?

    var json: JSONValue {
        var object: JSONObject = ["name": .string(name), "through": .number(JSONNumber(through)), "paused": .bool(paused)]
        if let next { object["next"] = .number(JSONNumber(next)) }
        if let lastFire { object["last_fire"] = .number(JSONNumber(lastFire)) }
        if let lastRun { object["last_run"] = .string(lastRun) }
        if let lastActual { object["last_actual"] = .number(JSONNumber(lastActual)) }
        if let waiting { object["waiting"] = .number(JSONNumber(waiting)) }
        return .object(object)
    }

    init(name: String, through: Double) {
        self.name = name
        self.through = through
    }

    /// Reads what ``json`` wrote; nil when it is not that (an edited store).
    init?(stored value: JSONValue) {
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
struct ScheduleHistoryEntry: Sendable, Equatable {
    enum Outcome: String, Sendable, CaseIterable {
        /// A run was requested (``runID``).
        case fired
        /// The fire times were not run: the agent was not running, was late, or the clock jumped.
        case missed
        /// Not run because of the schedule's state: the previous run still going, paused.
        case skipped
        /// `overlap: queue`: the fire waits for the previous run to end.
        case waiting
    }

    var schedule: String
    /// The planned fire time (the newest, when the line stands for several); nil: run now.
    var planned: Double?
    /// When it was dealt with.
    var actual: Double
    var outcome: Outcome
    var runID: String?
    var reason: String?
    /// Fire times this line stands for (a catch-up folds several into one run).
    var count = 1
    /// The earliest of them, when there are several.
    var firstPlanned: Double?

    /// As the commands show it (`result`: the run's status — a task run's or a workflow run's —,
    /// when known; planned times local to `zone`).
    func json(result: String? = nil, zone: TimeZone = TimeZone(identifier: "UTC")!) -> JSONValue {
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
    var storedJSON: JSONValue {
        var object: JSONObject = ["count": .number(JSONNumber(count))]
        if let reason { object["reason"] = .string(reason) }
        if let firstPlanned { object["first_planned"] = .number(JSONNumber(firstPlanned)) }
        return .object(object)
    }
}
