import Foundation

/// How long finished runs are kept: the store section's `retention` (`max_age`, `max_runs`),
/// applied alike to task runs, workflow runs (with their step logs) and schedule history lines,
/// by the agent's SQLite store (its writer) and by a fleet's PostgreSQL store (every agent, each
/// minute: deleting what is past the limits is the same whoever does it first). Unfinished
/// runs are never deleted.
package struct RunRetention: Sendable, Equatable {
    /// Seconds a finished run is kept after it ended (nil: no age limit).
    package var maximumAge: Double?
    /// Finished runs kept of each kind, the newest (nil: no count limit).
    package var maximumRuns: Int?

    package init(maximumAge: Double?, maximumRuns: Int?) {
        self.maximumAge = maximumAge
        self.maximumRuns = maximumRuns
    }

    /// Deletes from the stores what is past the limits at `now`; returns how many task runs went.
    @discardableResult
    package func apply(runs: any RunStore, workflows: any WorkflowStore, schedules: any ScheduleStore,
                       now: Double = Date().timeIntervalSince1970) async throws -> Int {
        let cutoff = maximumAge.map { now - $0 }
        try await schedules.pruneHistory(before: cutoff, keeping: maximumRuns)
        try await workflows.prune(endedBefore: cutoff, keeping: maximumRuns)
        return try await runs.prune(endedBefore: cutoff, keeping: maximumRuns)
    }
}
