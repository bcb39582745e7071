import AgentWork
import Foundation
import GRDB
import JSONSchema

/// Schedules' state and history in the agent's SQLite store (tables `schedules` and
/// `schedule_history`, migration v4-schedules). Commits go through the store's writer thread,
/// in the same transaction as the runs they request (``AgentStore/commitSchedules(_:done:)``);
/// reads use a read-only connection of their own.
package final class SQLiteScheduleStore: ScheduleStore {
    package let store: AgentStore
    private let reader: DatabaseQueue

    package init(store: AgentStore) throws {
        self.store = store
        reader = try AgentStore.readOnlyQueue(path: store.path)
    }

    package func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
        store.commitSchedules(change, done: done)
    }

    package func pruneHistory(before: Double?, keeping: Int?) async throws -> Int {
        try await SQLiteRunStore.offThread { [store] in
            try store.withWriter { db in try Self.prune(before: before, keeping: keeping, in: db) }
        }
    }

    package func loadStates() async throws -> [String: ScheduleState] {
        try await SQLiteRunStore.offThread { [reader] in
            try reader.read { db in
                var states: [String: ScheduleState] = [:]
                for text in try String.fetchAll(db, sql: "SELECT data FROM schedules") {
                    guard let state = (try? JSONValue.parse(Data(text.utf8))).flatMap(ScheduleState.init(stored:)) else { continue }
                    states[state.name] = state
                }
                return states
            }
        }
    }

    /// After the writes queued before it (a resume's skipped line, a fire's), so that `schedule
    /// history` right after a command that wrote one shows it.
    package func history(schedule: String, limit: Int) async throws -> [ScheduleHistoryEntry] {
        await withCheckedContinuation { (written: CheckedContinuation<Void, Never>) in store.whenWritten { written.resume() } }
        return try await SQLiteRunStore.offThread { [reader] in try Self.history(schedule: schedule, limit: limit, reader: reader) }
    }

    /// A schedule's history, newest first, read on the caller's thread.
    package static func history(schedule: String, limit: Int, reader: DatabaseQueue) throws -> [ScheduleHistoryEntry] {
        try reader.read { db in
            try Row.fetchAll(db, sql: """
                SELECT schedule, planned, actual, outcome, run_id, data FROM schedule_history
                WHERE schedule = ? ORDER BY row DESC LIMIT ?
                """, arguments: [schedule, max(limit, 0)]).compactMap { row in
                guard let outcome = ScheduleHistoryEntry.Outcome(rawValue: row["outcome"]) else { return nil }
                let data = (try? JSONValue.parse(Data((row["data"] as String? ?? "{}").utf8))) ?? .object([:])
                var entry = ScheduleHistoryEntry(schedule: row["schedule"], planned: row["planned"], actual: row["actual"], outcome: outcome,
                                                 runID: row["run_id"], reason: data["reason"]?.stringValue)
                entry.count = data["count"]?.numberValue?.intValue ?? 1
                entry.firstPlanned = data["first_planned"]?.numberValue?.doubleValue
                return entry
            }
        }
    }

    package func lead(holder: String, lease: Double) async throws -> Leadership? {
        try await SQLiteRunStore.offThread { [store] in
            try store.withWriter { db in try Self.lead(holder: holder, lease: lease, now: Date().timeIntervalSince1970, in: db) }
        }
    }

    package static let leaseName = "schedules"

    package static func lead(holder: String, lease: Double, now: Double, in db: Database) throws -> Leadership? {
        let row = try Row.fetchOne(db, sql: "SELECT holder, fence, expires FROM leases WHERE name = ?", arguments: [leaseName])
        let current: (holder: String, fence: Int64, expires: Double)? = row.map { ($0["holder"], $0["fence"], $0["expires"]) }
        if let current, current.holder != holder, current.expires >= now { return nil }
        let fence = current.map { $0.holder == holder && $0.expires >= now ? $0.fence : $0.fence + 1 } ?? 1
        try db.execute(sql: """
            INSERT INTO leases (name, holder, fence, expires) VALUES (?, ?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET holder = excluded.holder, fence = excluded.fence, expires = excluded.expires
            """, arguments: [leaseName, holder, fence, now + lease])
        return Leadership(holder: holder, fence: fence, until: now + lease)
    }

    /// Writes commits (on the store's writer thread, inside its transaction): for each, the
    /// runs (task runs and workflow runs) first, then the states and history. A commit made under a leadership that no
    /// longer holds is skipped whole. Returns whether each was written.
    package static func write(_ commits: [ScheduleCommit], in db: Database) throws -> [Bool] {
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO schedules (name, data, updated) VALUES (?, ?, ?)
            ON CONFLICT(name) DO UPDATE SET data = excluded.data, updated = excluded.updated
            """)
        let insert = try db.cachedStatement(sql: """
            INSERT INTO schedule_history (schedule, planned, actual, outcome, run_id, data) VALUES (?, ?, ?, ?, ?, ?)
            """)
        let now = Date().timeIntervalSince1970
        var written: [Bool] = []
        for commit in commits {
            if let leader = commit.leader {
                let holds = try Bool.fetchOne(db, sql: "SELECT 1 FROM leases WHERE name = ? AND holder = ? AND fence = ? AND expires >= ?",
                                              arguments: [leaseName, leader.holder, leader.fence, now]) ?? false
                guard holds else {
                    written.append(false)
                    continue
                }
            }
            if !commit.runs.isEmpty { try SQLiteRunStore.write(commit.runs, in: db) }
            if !commit.workflowRuns.isEmpty { try SQLiteWorkflowStore.write([WorkflowCommit(runs: commit.workflowRuns)], in: db) }
            for name in commit.removed { try db.execute(sql: "DELETE FROM schedules WHERE name = ?", arguments: [name]) }
            for state in commit.states { try upsert.execute(arguments: [state.name, state.json.serialized(), now]) }
            for entry in commit.history {
                try insert.execute(arguments: [entry.schedule, entry.planned, entry.actual, entry.outcome.rawValue, entry.runID,
                                               entry.storedJSON.serialized()])
            }
            written.append(true)
        }
        return written
    }

    /// History lines beyond the retention limits (by age, and all but the newest `keeping`).
    package static func prune(before: Double?, keeping: Int?, in db: Database) throws -> Int {
        try AgentStore.prune("schedule_history", time: "actual", before: before, keeping: keeping, in: db)
    }
}
