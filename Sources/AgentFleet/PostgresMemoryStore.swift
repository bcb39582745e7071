#if Fleet
import AgentBase
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// Shared memory in the fleet's PostgreSQL database (table `memory`, migration 8): every
/// agent of the fleet reads and writes the same keys.
///
/// Each write is one statement, so a compare-and-set is decided by the server, whatever agent
/// wrote first: an insert that expects no key (or any version) is an upsert whose update is
/// conditional, a write that expects a version is an UPDATE of that version. An actor, like
/// ``FleetWriter``: writes are handed over through a ``Handoff`` (a synchronous, ordered
/// yield) and made by the actor one at a time in that order, and `done` is called once the
/// server committed or refused them; while the database is away they wait. Reads ask the
/// server and wait for its answer (at most ``readTimeout``), and fail at once, `unavailable`,
/// while the fleet's database is degraded.
public actor PostgresMemoryStore: MemoryStore, HandoffReceiver {
    nonisolated let store: FleetWriter

    /// The longest a read waits for the server (a workflow's `${memory:…}` reads on the loop).
    static let readTimeout = 5.0

    /// Its ``backlog``: the writes waiting to be made.
    nonisolated let handoff = Handoff<Pending>(counting: true)
    private var pending: [Pending] = []
    private var closed = false
    private var wake: CheckedContinuation<Void, Never>?
    private static let now = PostgresMigrations.now

    /// A write handed over, and whom to answer.
    struct Pending: Sendable {
        var write: MemoryWrite
        var done: @Sendable (Result<MemoryEntry?, MemoryError>) -> Void

        /// The answer to a write not made because the agent stops.
        func refuse() {
            done(.failure(MemoryError(.unavailable, "the agent is stopping: the write was not made", key: write.key, scope: write.scope)))
        }
    }

    init(store: FleetWriter) {
        self.store = store
    }

    nonisolated var joinGate: FleetJoin? { store.join }

    private nonisolated var client: PostgresClient { store.client }
    private nonisolated var logger: Logger { store.logger }

    // MARK: MemoryStore

    package nonisolated func commit(_ write: MemoryWrite, done: @escaping @Sendable (Result<MemoryEntry?, MemoryError>) -> Void) {
        do throws(MemoryError) {
            try MemoryLimits.check(write)
        } catch {
            return done(.failure(error))
        }
        let item = Pending(write: write, done: done)
        if !handoff.yield(item) { item.refuse() }
    }

    package nonisolated func get(_ key: String, scope: MemoryScope) throws(MemoryError) -> MemoryEntry? {
        try MemoryLimits.check(key: key, scope: scope)
        let client = client, logger = logger
        return try reading(key: key, scope: scope) {
            let rows = try await client.query("""
                SELECT value, version, updated FROM memory WHERE scope = \(scope.description) AND key = \(key)
                """, logger: logger)
            var found: MemoryEntry?
            for try await (value, version, updated) in rows.decode((String, Int32, Double).self) {
                found = Self.entry(scope: scope, key: key, value: value, version: version, updated: updated)
            }
            return found
        }
    }

    package nonisolated func list(scope: MemoryScope, prefix: String, after: String?, limit: Int) throws(MemoryError) -> MemoryPage {
        try MemoryLimits.check(scope: scope)
        let limit = min(max(limit, 1), MemoryLimits.listEntries)
        let client = client, logger = logger
        let (page, runExists) = try reading(key: nil, scope: scope) { () async throws -> (MemoryPage, Bool) in
            // Keys in byte order (the column's collation is "C"); the prefix as a range, not
            // LIKE, so that `%` and `_` in keys mean themselves.
            // Both bounds in SQL: Swift's `max` of two strings is not byte order.
            let rows = try await client.query("""
                SELECT key, value, version, updated FROM memory WHERE scope = \(scope.description) AND key >= \(prefix)
                AND (\(after)::text IS NULL OR key > \(after)) ORDER BY key LIMIT \(limit + 1)
                """, logger: logger)
            var entries: [MemoryEntry] = []
            var bytes = 0
            var next: String?
            for try await (key, value, version, updated) in rows.decode((String, String, Int32, Double).self) {
                guard key.utf8.starts(with: prefix.utf8) else { break }
                if entries.count == limit || (bytes > 0 && bytes >= MemoryLimits.listBytes) {
                    next = entries.last?.key
                    break
                }
                guard let entry = Self.entry(scope: scope, key: key, value: value, version: version, updated: updated) else { continue }
                bytes += value.utf8.count
                entries.append(entry)
            }
            // No keys: a run's scope says whether its run is there (a mistyped id is not "no keys").
            guard entries.isEmpty, let run = scope.runID else { return (MemoryPage(entries: entries, next: next), true) }
            return (MemoryPage(entries: [], next: nil), try await self.runExists(run))
        }
        guard runExists else { throw MemoryError.noRun(key: nil, scope: scope) }
        return page
    }

    /// Runs a read, waiting for it at most ``readTimeout``; a read while the database is
    /// degraded fails at once.
    private nonisolated func reading<T: Sendable>(key: String?, scope: MemoryScope, _ body: @escaping @Sendable () async throws -> T) throws(MemoryError) -> T {
        if let reason = store.health.degraded {
            throw MemoryError(.unavailable, "the fleet's shared memory cannot be read now: \(reason)", key: key, scope: scope)
        }
        do {
            return try StoreWait.result(timeout: Self.readTimeout, body)
        } catch {
            throw MemoryError(.unavailable, "cannot read the fleet's shared memory: \(FleetStoreError.describe(error))", key: key, scope: scope)
        }
    }

    private static func entry(scope: MemoryScope, key: String, value: String, version: Int32, updated: Double) -> MemoryEntry? {
        guard let json = try? JSONValue.parse(Data(value.utf8)) else { return nil }
        return MemoryEntry(scope: scope, key: key, value: json, version: Int(version), updated: updated)
    }

    // MARK: The writer

    func take(_ item: Pending) {
        pending.append(item)
        wake?.resume()
        wake = nil
    }

    /// The hand-over has ended (``stop()``): the writes still waiting are answered `unavailable`.
    func handoffEnded() {
        closed = true
        wake?.resume()
        wake = nil
        let left = pending
        pending = []
        handoff.done(left.count)
        for item in left { item.refuse() }
    }

    func writeLoop() async {
        while !Task.isCancelled, !closed {
            guard !pending.isEmpty else {
                await withCheckedContinuation { wake = $0 }
                continue
            }
            let item = pending.removeFirst()
            let outcome = await apply(item.write)
            handoff.done()
            item.done(outcome)
        }
    }

    /// One write, in one statement (autocommit): its outcome as the server decided it.
    private nonisolated func apply(_ write: MemoryWrite) async -> Result<MemoryEntry?, MemoryError> {
        let scope = write.scope.description, key = write.key
        do {
            switch write.operation {
            case .put(let value):
                let text: String
                do throws(MemoryError) { text = try MemoryLimits.serialize(value, key: key, scope: write.scope) } catch { return .failure(error) }
                let rows: PostgresRowSequence
                let run = write.scope.runID
                if let expected = write.expectedVersion, expected > 0 {
                    // In a run's scope only while the run exists, as below.
                    rows = try await client.query("""
                        UPDATE memory SET value = \(text), version = version + 1, updated = \(unescaped: Self.now)
                        WHERE scope = \(scope) AND key = \(key) AND version = \(expected)
                        AND (\(run)::text IS NULL OR EXISTS (SELECT 1 FROM workflow_runs WHERE id = \(run) FOR KEY SHARE))
                        RETURNING version, updated
                        """, logger: logger)
                } else {
                    // No key yet: version 1. A key there: its next version, unless the write
                    // expects none (0), which the condition of the update refuses. In a run's
                    // scope only while the run exists: its row is locked (KEY SHARE) until
                    // the write commits, so a retention deleting the run waits for it, and its
                    // sweep of the gone runs' keys, a later statement of its transaction, sees
                    // the key.
                    let any = write.expectedVersion == nil
                    rows = try await client.query("""
                        INSERT INTO memory AS m (scope, key, value, version, updated)
                        SELECT \(scope), \(key), \(text), 1, \(unescaped: Self.now)
                        WHERE \(run)::text IS NULL OR EXISTS (SELECT 1 FROM workflow_runs WHERE id = \(run) FOR KEY SHARE)
                        ON CONFLICT (scope, key) DO UPDATE SET value = EXCLUDED.value, version = m.version + 1, updated = EXCLUDED.updated
                        WHERE \(any) RETURNING version, updated
                        """, logger: logger)
                }
                // Every row read, so that the statement has completed (and committed) before
                // the write is answered: a reader told of it must find it.
                var written: (Int32, Double)?
                for try await row in rows.decode((Int32, Double).self) { written = row }
                if let (version, updated) = written {
                    return .success(MemoryEntry(scope: write.scope, key: key, value: value, version: Int(version), updated: updated))
                }
                if let run, try await !runExists(run) { return .failure(MemoryError.noRun(write)) }
                return .failure(MemoryError.conflict(write, found: try await currentVersion(write)))
            case .delete:
                let expected = write.expectedVersion
                let rows = try await client.query("""
                    DELETE FROM memory WHERE scope = \(scope) AND key = \(key) AND (\(expected)::integer IS NULL OR version = \(expected))
                    RETURNING value, version, updated
                    """, logger: logger)
                var removed: (String, Int32, Double)?
                for try await row in rows.decode((String, Int32, Double).self) { removed = row }
                if let (value, version, updated) = removed {
                    return .success(Self.entry(scope: write.scope, key: key, value: value, version: version, updated: updated))
                }
                // Nothing deleted: there was no key, or not at the version expected.
                guard let expected else { return .success(nil) }
                let version = try await currentVersion(write)
                return version == expected ? .success(nil) : .failure(MemoryError.conflict(write, found: version))
            }
        } catch {
            return .failure(MemoryError(.unavailable, "cannot write the fleet's shared memory: \(FleetStoreError.describe(error))", key: key, scope: write.scope))
        }
    }

    /// Whether workflow run `id` exists (for a refused write's reason).
    private nonisolated func runExists(_ id: String) async throws -> Bool {
        for try await _ in try await client.query("SELECT 1 FROM workflow_runs WHERE id = \(id)", logger: logger).decode(Int32.self) { return true }
        return false
    }

    /// The key's version now, 0 when there is none (for a refusal's message: another write may
    /// have come since the one refused).
    private nonisolated func currentVersion(_ write: MemoryWrite) async throws -> Int {
        var version = 0
        let rows = try await client.query("""
            SELECT version FROM memory WHERE scope = \(write.scope.description) AND key = \(write.key)
            """, logger: logger)
        for try await found in rows.decode(Int32.self) { version = Int(found) }
        return version
    }
}
#endif
