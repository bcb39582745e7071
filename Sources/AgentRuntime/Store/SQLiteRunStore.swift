import Foundation
import GRDB
import JSONSchema

/// Task runs in the agent's SQLite store (table `task_runs`): changes go through the store's
/// batching writer thread (``AgentStore/recordRun(_:)``), reads use a read-only connection of
/// their own, which WAL mode lets run beside the writer.
final class SQLiteRunStore: RunStore, @unchecked Sendable {
    let store: AgentStore
    private let reader: DatabaseQueue

    init(store: AgentStore) throws {
        self.store = store
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        reader = try DatabaseQueue(path: store.path, configuration: configuration)
    }

    func record(_ run: TaskRun) { store.recordRun(run) }

    func loadUnfinished() throws -> [TaskRun] {
        try reader.read { db in
            try String.fetchAll(db, sql: "SELECT data FROM task_runs WHERE finished = 0 ORDER BY row").compactMap(Self.decode)
        }
    }

    func list(_ filter: RunFilter) throws -> [TaskRun] {
        var conditions: [String] = []
        var arguments: [any DatabaseValueConvertible] = []
        if let task = filter.task {
            conditions.append("task = ?")
            arguments.append(task)
        }
        if let status = filter.status {
            conditions.append("status = ?")
            arguments.append(status.rawValue)
        }
        let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT data FROM task_runs \(clause) ORDER BY row DESC LIMIT \(max(filter.limit, 0))"
        return try reader.read { db in
            try String.fetchAll(db, sql: sql, arguments: StatementArguments(arguments)).compactMap(Self.decode)
        }
    }

    func run(id: String) throws -> TaskRun? {
        try reader.read { db in
            try String.fetchOne(db, sql: "SELECT data FROM task_runs WHERE id = ?", arguments: [id]).flatMap(Self.decode)
        }
    }

    func prune(endedBefore: Double?, keeping: Int?) throws -> Int {
        try store.withWriter { db in try Self.prune(endedBefore: endedBefore, keeping: keeping, in: db) }
    }

    static func decode(_ text: String) -> TaskRun? {
        (try? JSONValue.parse(Data(text.utf8))).flatMap(TaskRun.init(stored:))
    }

    /// Writes a batch of changes (on the store's writer thread, in its transaction): only the
    /// last change of each run in the batch is written.
    static func write(_ batch: [TaskRun], in db: Database) throws {
        var last: [String: Int] = [:]
        last.reserveCapacity(batch.count)
        for (index, run) in batch.enumerated() { last[run.id] = index }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO task_runs (id, task, status, finished, ended, data, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET status = excluded.status, finished = excluded.finished, ended = excluded.ended, data = excluded.data
            """)
        for (index, run) in batch.enumerated() where last[run.id] == index {
            try upsert.execute(arguments: [run.id, run.task, run.status.rawValue, run.status.isFinished ? 1 : 0, run.endedAt,
                                           run.storedJSON.serialized(), run.idempotencyKey])
        }
    }

    /// Deletes finished runs beyond the retention limits (unfinished ones are never deleted).
    static func prune(endedBefore: Double?, keeping: Int?, in db: Database) throws -> Int {
        var deleted = 0
        if let endedBefore {
            try db.execute(sql: "DELETE FROM task_runs WHERE finished = 1 AND ended < ?", arguments: [endedBefore])
            deleted += db.changesCount
        }
        if let keeping {
            try db.execute(sql: """
                DELETE FROM task_runs WHERE finished = 1 AND row <= (
                    SELECT row FROM task_runs WHERE finished = 1 ORDER BY row DESC LIMIT 1 OFFSET ?)
                """, arguments: [keeping])
            deleted += db.changesCount
        }
        return deleted
    }
}
