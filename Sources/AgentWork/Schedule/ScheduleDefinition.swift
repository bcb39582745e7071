import Foundation
import JSONSchema

/// One entry of the settings' `"schedules"`: when a task runs on its own, and what happens to
/// fire times the agent was not there for or that find the previous run still going.
///
/// ```json
/// "schedules": {"nightly_backup": {"cron": "0 3 * * *", "timezone": "Europe/Berlin",
///                                  "run": {"task": "backup", "input": {"full": true}},
///                                  "catch_up": "one", "overlap": "skip", "jitter": 30}}
/// ```
public struct ScheduleDefinition: Equatable, Sendable {
    /// What happens to fire times the agent missed (it was not running, or its loop was late).
    public enum CatchUp: String, Sendable, CaseIterable {
        /// Missed times are recorded as missed; none runs.
        case none
        /// All missed times are folded into one run, recorded as such.
        case one
        /// Each missed time runs (the newest `max_catch_up` within `catch_up_window`).
        case all
    }

    /// What a fire does while the schedule's previous run is still going.
    public enum Overlap: String, Sendable, CaseIterable {
        /// The fire is skipped (recorded with the reason).
        case skip
        /// One fire waits and runs when the previous run ends; a further one is skipped.
        case queue
        /// The previous run is cancelled and the new one runs.
        case replace
        /// The new run is queued beside it (the task's `max_concurrent` still applies).
        case allow
    }

    /// The key in `"schedules"`.
    public var name: String
    public var timing: ScheduleTiming
    /// The zone cron fields are read in (and an `at` without an offset); default: the system's.
    public var timeZone: TimeZone
    /// The task each fire runs (empty when it starts ``workflow``), and its input.
    public var task: String
    /// The workflow each fire starts instead of a task (`"run": {"workflow": …}`).
    public var workflow: String?
    public var input: JSONValue
    public var catchUp: CatchUp = .one
    /// `catch_up: all`: at most this many runs for the missed times (the newest).
    public var maxCatchUp: Int = 10
    /// Missed times older than this many seconds are not caught up (nil: no limit).
    public var catchUpWindow: Double?
    public var overlap: Overlap = .skip
    /// Each fire waits a random delay of up to this many seconds.
    public var jitter: Double = 0
    public var enabled: Bool = true
    public var description: String = ""

    public init(name: String, timing: ScheduleTiming, timeZone: TimeZone = .current, task: String, input: JSONValue = .object([:])) {
        self.name = name
        self.timing = timing
        self.timeZone = timeZone
        self.task = task
        self.input = input
    }

    /// A schedule whose fires start runs of `workflow`.
    public init(name: String, timing: ScheduleTiming, timeZone: TimeZone = .current, workflow: String, input: JSONValue = .object([:])) {
        self.init(name: name, timing: timing, timeZone: timeZone, task: "", input: input)
        self.workflow = workflow
    }

    /// What a fire runs, as the commands and the log name it: `task backup`, `workflow refunds`.
    package var target: String { workflow.map { "workflow " + $0 } ?? "task " + task }
}
