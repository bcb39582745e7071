/// Where task runs are kept: the embedded SQLite store (``SQLiteRunStore``) for one agent; a
/// shared database for a fleet later. Kept narrow on purpose, so that another store only
/// needs these five operations.
///
/// ``record(_:)`` is called on the supervisor's loop at every change of a run and must return
/// at once (hand the record to a writer); the reads are called off the loop.
protocol RunStore: AnyObject, Sendable {
    /// Records a run's new state (insert or replace by id). Never blocks.
    func record(_ run: TaskRun)
    /// Every run not finished (queued, running, retrying), oldest first: the queue at start.
    func loadUnfinished() throws -> [TaskRun]
    /// Runs matching `filter`, newest first.
    func list(_ filter: RunFilter) throws -> [TaskRun]
    /// One run by id.
    func run(id: String) throws -> TaskRun?
    /// Deletes finished runs that ended before `endedBefore` (nil: no age limit) and all but the
    /// newest `keeping` finished runs (nil: no count limit). Returns how many went.
    @discardableResult
    func prune(endedBefore: Double?, keeping: Int?) throws -> Int
}

/// Which runs `task runs` lists.
struct RunFilter: Sendable, Equatable {
    var task: String?
    var status: TaskRun.Status?
    var limit: Int = 100

    /// Whether `run` passes the filter (the limit aside).
    func matches(_ run: TaskRun) -> Bool {
        (task == nil || run.task == task) && (status == nil || run.status == status)
    }
}
