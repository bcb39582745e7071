import AgentWork
import Foundation
import GRDB
import JSONSchema

/// Workflow runs and step logs in the agent's SQLite store (tables `workflow_runs` and
/// `workflow_steps`, migration v5-workflows). Commits go through the store's batching writer
/// (``AgentStore/commitWorkflows(_:done:)``), one transaction per batch; reads use a read-only
/// connection of their own.
package final class SQLiteWorkflowStore: WorkflowStore {
    package let store: AgentStore
    private let reader: DatabaseQueue

    package init(store: AgentStore) throws {
        self.store = store
        reader = try AgentStore.readOnlyQueue(path: store.path)
    }

    package func commit(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void) {
        store.commitWorkflows(change, done: done)
    }

    /// While the store cannot write: whether its run journal has room for a change.
    package var keepsChangesNow: Bool { store.keepsChangesNow }

    package func loadUnfinished() async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] { try loadUnfinishedNow() }

    /// ``loadUnfinished()`` on the caller's thread (the agent's start).
    package func loadUnfinishedNow() throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] {
        try reader.read { db in
            let runs = try String.fetchAll(db, sql: "SELECT data FROM workflow_runs WHERE finished = 0 ORDER BY row").compactMap(Self.decodeRun)
            return try runs.map { ($0, try Self.steps(of: $0.id, in: db)) }
        }
    }

    package func list(_ filter: WorkflowRunFilter) async throws -> RunListPage<WorkflowRun> {
        try await SQLiteRunStore.offThread { [reader] in try Self.list(filter, reader: reader) }
    }

    package func run(id: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        try await SQLiteRunStore.offThread { [reader] in try Self.run(id: id, reader: reader) }
    }

    package func prune(endedBefore: Double?, keeping: Int?) async throws -> Int {
        try await SQLiteRunStore.offThread { [store] in
            try store.withWriter { db in
                // Read on the writer, where the journal is pinned (see RunJournal.keepsRunsFromPruning).
                store.runJournal.keepsRunsFromPruning ? 0 : try Self.prune(before: endedBefore, keeping: keeping, in: db)
            }
        }
    }

    /// Reads on the caller's thread (GRDB's synchronous reads; the reader is a connection of its
    /// own, the agent's or `agent-control workflow runs`' beside a stopped agent).
    /// Each run's record for lists (without its long members, see ``RunListing``) where it has one.
    package static func list(_ filter: WorkflowRunFilter, reader: DatabaseQueue) throws -> RunListPage<WorkflowRun> {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let workflow = filter.workflow {
            conditions.append("workflow = ?")
            arguments.append(workflow)
        }
        if let status = filter.status {
            conditions.append("status = ?")
            arguments.append(status.rawValue)
        }
        let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        return try reader.read { db in
            try SQLiteRunStore.readListed(String.fetchCursor(db, sql: "SELECT \(SQLiteRunStore.listedRecord) FROM workflow_runs \(clause) ORDER BY row DESC LIMIT \(max(filter.limit, 0))",
                                                             arguments: StatementArguments(arguments)), unshown: ["definition"], WorkflowRun.init(listed:))
        }
    }

    package static func run(id: String, reader: DatabaseQueue) throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        try reader.read { db in
            guard let run = try String.fetchOne(db, sql: "SELECT data FROM workflow_runs WHERE id = ?", arguments: [id]).flatMap(Self.decodeRun) else { return nil }
            return (run, try Self.steps(of: id, in: db))
        }
    }

    private static func steps(of run: String, in db: Database) throws -> [WorkflowStepRecord] {
        try String.fetchAll(db, sql: "SELECT data FROM workflow_steps WHERE run_id = ? ORDER BY row", arguments: [run]).compactMap { text in
            (try? JSONValue.parse(Data(text.utf8))).flatMap(WorkflowStepRecord.init(stored:))
        }
    }

    package static func decodeRun(_ text: String) -> WorkflowRun? {
        (try? JSONValue.parse(Data(text.utf8))).flatMap(WorkflowRun.init(stored:))
    }

    /// Writes commits (on the store's writer thread, inside its transaction), in order.
    package static func write(_ commits: [WorkflowCommit], in db: Database) throws {
        let upsertRun = try db.cachedStatement(sql: """
            INSERT INTO workflow_runs (id, workflow, status, finished, ended, data, listed) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET status = excluded.status, finished = excluded.finished, ended = excluded.ended,
                data = excluded.data, listed = excluded.listed
            """)
        let upsertStep = try db.cachedStatement(sql: """
            INSERT INTO workflow_steps (run_id, step, generation, status, data) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(run_id, step, generation) DO UPDATE SET status = excluded.status, data = excluded.data
            """)
        for commit in commits {
            for run in commit.runs {
                let texts = RecordTexts(run.storedJSON)
                try upsertRun.execute(arguments: [run.id, run.workflow, run.status.rawValue, run.status.isFinished ? 1 : 0, run.endedAt,
                                                  texts.data, texts.listed])
            }
            for step in commit.steps {
                try upsertStep.execute(arguments: [step.runID, step.stepID, step.generation, step.status.rawValue, step.storedJSON.serialized()])
            }
        }
    }

    /// Finished workflow runs beyond the retention limits (as task runs: by age, and all but
    /// the newest `keeping`), with their step logs and their keys in shared memory; unfinished
    /// runs are never deleted.
    package static func prune(before: Double?, keeping: Int?, in db: Database) throws -> Int {
        let deleted = try AgentStore.prune("workflow_runs", finished: "finished = 1", time: "ended", before: before, keeping: keeping, in: db)
        if deleted > 0 {
            try db.execute(sql: "DELETE FROM workflow_steps WHERE NOT EXISTS (SELECT 1 FROM workflow_runs r WHERE r.id = workflow_steps.run_id)")
            try SQLiteMemoryStore.deleteKeysOfGoneRuns(in: db)
        }
        return deleted
    }
}
