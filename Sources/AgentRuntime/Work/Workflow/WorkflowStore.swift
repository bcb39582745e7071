import Foundation

/// Where workflow runs and their step logs are kept: the embedded SQLite store
/// (``SQLiteWorkflowStore``) for one agent; a shared database for a fleet later. Kept narrow,
/// next to ``RunStore`` and ``ScheduleStore``: no SQL in the engine.
///
/// ``commit(_:done:)`` is called on the loop and returns at once; the engine starts a step's
/// effect only once its start is committed, and the next step only once a step's result is.
protocol WorkflowStore: AnyObject, Sendable {
    /// Commits `change` in one transaction (after what was handed over before), then calls
    /// `done` (on any thread) with whether it was written.
    func commit(_ change: WorkflowCommit, done: @escaping @Sendable (Bool) -> Void)
    /// Every unfinished run with its whole step log (oldest first): what resumes at start.
    func loadUnfinished() throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])]
    /// Runs matching `filter`, newest first (without their steps).
    func list(_ filter: WorkflowRunFilter) throws -> [WorkflowRun]
    /// One run with its step log, in the order the steps started.
    func run(id: String) throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])?
}

/// What one change of the engine writes together.
struct WorkflowCommit: Sendable {
    var runs: [WorkflowRun] = []
    var steps: [WorkflowStepRecord] = []
}

/// Which runs `workflow runs` lists.
struct WorkflowRunFilter: Sendable, Equatable {
    var workflow: String?
    var status: WorkflowRun.Status?
    var limit = 100

    func matches(_ run: WorkflowRun) -> Bool {
        (workflow == nil || run.workflow == workflow) && (status == nil || run.status == status)
    }
}
