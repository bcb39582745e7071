import AgentWork
import Foundation
import GRDB
import JSONSchema

/// Shared memory in the agent's SQLite store (table `memory`, migration v5-memory). Writes go
/// through the store's writer thread, in its transactions, after what was handed over before
/// them (``AgentStore/commitMemory(_:done:)``); reads use a read-only connection of their own.
package final class SQLiteMemoryStore: MemoryStore {
    package let store: AgentStore
    private let reader: DatabaseQueue

    package init(store: AgentStore) throws {
        self.store = store
        reader = try AgentStore.readOnlyQueue(path: store.path)
    }

    package func commit(_ write: MemoryWrite, done: @escaping @Sendable (Result<MemoryEntry?, MemoryError>) -> Void) {
        do throws(MemoryError) {
            try MemoryLimits.check(write)
        } catch {
            return done(.failure(error))
        }
        store.commitMemory(write, done: done)
    }

    package func get(_ key: String, scope: MemoryScope) throws(MemoryError) -> MemoryEntry? {
        try MemoryLimits.check(key: key, scope: scope)
        return try reading { db in
            try Row.fetchOne(db, sql: "SELECT key, value, version, updated FROM memory WHERE scope = ? AND key = ?",
                             arguments: [scope.description, key]).flatMap { Self.entry($0, scope: scope) }
        }
    }

    package func list(scope: MemoryScope, prefix: String, after: String?, limit: Int) throws(MemoryError) -> MemoryPage {
        try MemoryLimits.check(scope: scope)
        let limit = min(max(limit, 1), MemoryLimits.listEntries)
        let (page, runExists) = try reading { db -> (MemoryPage, Bool) in
            // Keys in byte order (SQLite's BINARY collation); the prefix as a range, not LIKE,
            // so that `%` and `_` in keys mean themselves.
            var sql = "SELECT key, value, version, updated FROM memory WHERE scope = ? AND key >= ?"
            var arguments: [any DatabaseValueConvertible] = [scope.description, prefix]
            if let after {
                sql += " AND key > ?"
                arguments.append(after)
            }
            sql += " ORDER BY key LIMIT ?"
            arguments.append(limit + 1)
            var entries: [MemoryEntry] = []
            var bytes = 0
            var next: String?
            let rows = try Row.fetchCursor(db, sql: sql, arguments: StatementArguments(arguments))
            while let row = try rows.next() {
                let key: String = row["key"]
                guard key.utf8.starts(with: prefix.utf8) else { break }
                if entries.count == limit || (bytes > 0 && bytes >= MemoryLimits.listBytes) {
                    next = entries.last?.key
                    break
                }
                guard let entry = Self.entry(row, scope: scope) else { continue }
                bytes += (row["value"] as String? ?? "").utf8.count
                entries.append(entry)
            }
            // No keys: a run's scope says whether its run is there (a mistyped id is not "no keys").
            guard entries.isEmpty, let run = scope.runID else { return (MemoryPage(entries: entries, next: next), true) }
            return (MemoryPage(entries: [], next: nil), try Bool.fetchOne(db, sql: "SELECT 1 FROM workflow_runs WHERE id = ?", arguments: [run]) != nil)
        }
        guard runExists else { throw MemoryError.noRun(key: nil, scope: scope) }
        return page
    }

    private func reading<T>(_ body: (Database) throws -> T) throws(MemoryError) -> T {
        do {
            return try reader.read(body)
        } catch {
            throw MemoryError(.unavailable, "cannot read the shared memory in \(store.path): \(error)", key: nil, scope: nil)
        }
    }

    private static func entry(_ row: Row, scope: MemoryScope) -> MemoryEntry? {
        guard let value = try? JSONValue.parse(row["value"] as String? ?? "") else { return nil }
        return MemoryEntry(scope: scope, key: row["key"], value: value, version: row["version"], updated: row["updated"])
    }

    /// Applies writes (on the store's writer thread, inside its transaction, after the
    /// transaction's workflow runs), each checked against the version it expects and, in a
    /// run's scope, against the run: a refused write changes nothing and the others go on.
    package static func write(_ writes: [MemoryWrite], in db: Database) throws -> [Result<MemoryEntry?, MemoryError>] {
        let now = Date().timeIntervalSince1970
        let select = try db.cachedStatement(sql: "SELECT key, value, version, updated FROM memory WHERE scope = ? AND key = ?")
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO memory (scope, key, value, version, updated) VALUES (?, ?, ?, ?, ?)
            ON CONFLICT(scope, key) DO UPDATE SET value = excluded.value, version = excluded.version, updated = excluded.updated
            """)
        let remove = try db.cachedStatement(sql: "DELETE FROM memory WHERE scope = ? AND key = ?")
        let run = try db.cachedStatement(sql: "SELECT 1 FROM workflow_runs WHERE id = ?")
        return try writes.map { write in
            let scope = write.scope.description
            // A run that is gone first, whatever version the write expects: its keys are gone too.
            if case .put = write.operation, let id = write.scope.runID, try Bool.fetchOne(run, arguments: [id]) == nil {
                return .failure(MemoryError.noRun(write))
            }
            let current = try Row.fetchOne(select, arguments: [scope, write.key]).flatMap { entry($0, scope: write.scope) }
            let version = current?.version ?? 0
            if let expected = write.expectedVersion, expected != version { return .failure(MemoryError.conflict(write, found: version)) }
            switch write.operation {
            case .put(let value):
                let text: String
                do throws(MemoryError) { text = try MemoryLimits.serialize(value, key: write.key, scope: write.scope) } catch { return .failure(error) }
                try upsert.execute(arguments: [scope, write.key, text, version + 1, now])
                return .success(MemoryEntry(scope: write.scope, key: write.key, value: value, version: version + 1, updated: now))
            case .delete:
                try remove.execute(arguments: [scope, write.key])
                return .success(current)
            }
        }
    }

    /// Deletes the keys of workflow runs that are gone (after the retention deleted runs; it
    /// also takes keys an older version left behind). The range is the scopes `run:…`.
    package static func deleteKeysOfGoneRuns(in db: Database) throws {
        try db.execute(sql: """
            DELETE FROM memory WHERE scope >= 'run:' AND scope < 'run;'
            AND NOT EXISTS (SELECT 1 FROM workflow_runs r WHERE r.id = substr(memory.scope, 5))
            """)
    }
}
