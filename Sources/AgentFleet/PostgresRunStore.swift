#if Fleet
import AgentCore
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO
import Synchronization

/// Task runs in the fleet's PostgreSQL database (table `task_runs`, their attempts in
/// `task_attempts`, see PostgresRunStore+Attempts.swift): the shared queue.
/// Claims take rows with `FOR UPDATE SKIP LOCKED` (agents claiming at once never wait for
/// each other nor take the same run), each with a fencing token from one sequence and a lease
/// on the server's clock; a run whose lease lapsed is claimable again.
public final class PostgresRunStore: RunStore {
    let store: FleetWriter
    /// Runs whose record this agent cannot read (another version's, or other hands'): claimed
    /// once, never again by this agent — each claim had run nothing and kept the run from the
    /// agents that can read it until its lease lapsed, at every lease. At most
    /// ``mostUnreadable`` are remembered.
    private let unreadable = Mutex<Set<String>>([])
    static let mostUnreadable = 10_000

    init(store: FleetWriter) { self.store = store }

    var client: PostgresClient { store.client }
    var logger: Logger { store.logger }
    private static let now = PostgresMigrations.now

    package func record(_ run: TaskRun) { store.enqueue(run) }

    package var refusedWrites: Int { store.health.refused }

    package func flush() async { await store.flush() }

    package func loadUnfinished() async throws -> [TaskRun] {
        try store.requireJoined()
        return try await decodeRuns(client.query("SELECT \(unescaped: Self.record) FROM task_runs WHERE NOT finished ORDER BY seq", logger: logger))
    }

    /// Each run without its members longer than ``RunListing/storedMemberLimit``
    /// (``PostgresListing``); ``RunListing`` leaves out the shorter long ones.
    package func list(_ filter: RunFilter) async throws -> RunListPage<TaskRun> {
        try await store.reading { [self] in
            let status = filter.status?.rawValue
            let rows = try await client.query("""
                \(unescaped: PostgresListing.select(["claims", "started", "holder"])) FROM (SELECT *, \(unescaped: PostgresListing.fresh) AS fresh
                FROM task_runs WHERE (\(filter.task)::text IS NULL OR task = \(filter.task)) AND (\(status)::text IS NULL OR status = \(status))
                ORDER BY seq DESC LIMIT \(max(filter.limit, 0))) t \(unescaped: PostgresListing.measured)
                """, logger: logger)
            var reader = RunListReader<TaskRun>()
            for try await (data, omitted, claims, started, holder) in rows.decode((String, [String]?, Int32, Double?, String?).self) {
                reader.add(data, omitted: omitted) { record in
                    guard var run = TaskRun(stored: record) else { return nil }
                    Self.overlay(&run, claims: Int(claims), started: started, holder: holder)
                    return run
                }
            }
            return reader.page
        }
    }

    package func run(id: String) async throws -> TaskRun? {
        try await store.reading(refusingWhileDegraded: false) { [self] in
            return try await decodeRuns(client.query("SELECT \(unescaped: Self.record) FROM task_runs WHERE id = \(id)", logger: logger)).first
        }
    }

    package func prune(endedBefore: Double?, keeping: Int?) async throws -> Int {
        // A run's attempts go with it.
        try await Self.prune("task_runs", finished: "finished", time: "ended", order: "seq", before: endedBefore, keeping: keeping,
                             client: client, logger: logger, then: "DELETE FROM task_attempts WHERE run_id IN (SELECT id FROM gone)")
    }

    /// Deletes, in one transaction, the rows of `table` that `finished` selects (an SQL condition)
    /// whose `time` is before `before` (nil: no age limit), then all but the newest `keeping` of
    /// them by `order` (nil: no count limit); `then`, a statement that sees the deleted rows'
    /// `key`s as `gone(id)`, runs with each delete; `last`, a statement of its own, runs after
    /// them in the same transaction when a row went (it sees what was committed meanwhile, and
    /// fails the whole pass if it fails). The retention of every table of records (as
    /// `AgentStore.prune` on SQLite). Returns how many rows went.
    static func prune(_ table: String, key: String = "id", finished: String, time: String, order: String, before: Double?, keeping: Int?,
                      client: PostgresClient, logger: Logger, then: String? = nil, last: String? = nil) async throws -> Int {
        guard before != nil || keeping != nil else { return 0 }
        let also = then.map { ", dependents AS (\($0))" } ?? ""
        return try await client.withTransaction(logger: logger) { connection in
            var deleted = 0
            if let before {
                let rows = try await connection.query("""
                    WITH gone AS (DELETE FROM \(unescaped: table) WHERE \(unescaped: finished) AND \(unescaped: time) < \(before)
                    RETURNING \(unescaped: key) AS id)\(unescaped: also) SELECT count(*) FROM gone
                    """, logger: logger)
                for try await count in rows.decode(Int64.self) { deleted += Int(count) }
            }
            if let keeping {
                let rows = try await connection.query("""
                    WITH gone AS (DELETE FROM \(unescaped: table) WHERE \(unescaped: finished) AND \(unescaped: order) <= (
                        SELECT \(unescaped: order) FROM \(unescaped: table) WHERE \(unescaped: finished) ORDER BY \(unescaped: order) DESC
                        LIMIT 1 OFFSET \(keeping)) RETURNING \(unescaped: key) AS id)\(unescaped: also) SELECT count(*) FROM gone
                    """, logger: logger)
                for try await count in rows.decode(Int64.self) { deleted += Int(count) }
            }
            if deleted > 0, let last { try await connection.query(PostgresQuery(unsafeSQL: last), logger: logger) }
            return deleted
        }
    }

    /// Queues new runs in one transaction and one statement: one commit, so the agents are
    /// woken once for the whole batch and never see part of it (a batch submitted at once;
    /// agent-bench's figure 13 fills the queue this way). Runs already there are refused whole.
    package func queue(_ runs: [TaskRun]) async throws {
        guard !runs.isEmpty else { return }
        let columns = Columns(runs)
        try await client.query("""
            INSERT INTO task_runs (id, task, status, finished, priority, due, data, listed, listed_for, assigned_to, assigned_until, require)
            SELECT c.id, c.task, c.status, c.finished, c.priority, c.due, c.data, NULLIF(c.listed, ''), c.listed_for, NULLIF(c.assigned, ''),
                NULLIF(c.until, 'NaN'::float8), NULLIF(c.require, '')::jsonb
            FROM unnest(\(columns.ids)::text[], \(columns.tasks)::text[], \(columns.statuses)::text[], \(columns.finished)::boolean[],
                        \(columns.priorities)::int2[], \(columns.dues)::float8[], \(columns.records)::text[], \(columns.listed)::text[],
                        \(columns.listedFor)::int8[], \(columns.assigned)::text[], \(columns.holdUntil)::float8[], \(columns.requires)::text[])
                AS c(id, task, status, finished, priority, due, data, listed, listed_for, assigned, until, require)
            """, logger: logger)
    }

    /// How many runs of `task` are in each status (`queued`, `running`, `succeeded`, …).
    package func statusCounts(task: String) async throws -> [String: Int] {
        try await store.reading { [self] in
            var counts: [String: Int] = [:]
            let rows = try await client.query("SELECT status, count(*) FROM task_runs WHERE task = \(task) GROUP BY status", logger: logger)
            for try await (status, count) in rows.decode((String, Int).self) { counts[status] = count }
            return counts
        }
    }

    /// How many runs of `task` are not finished: a cheap wait for a queue to drain (it reads the
    /// unfinished runs' index entries, where ``statusCounts(task:)`` reads every run of the task).
    package func unfinishedCount(task: String) async throws -> Int {
        try await store.reading { [self] in
            let rows = try await client.query("SELECT count(*) FROM task_runs WHERE task = \(task) AND NOT finished", logger: logger)
            for try await count in rows.decode(Int.self) { return count }
            return 0
        }
    }

    /// How many runs of `task` each holder holds now (`running` under its claim).
    package func heldCounts(task: String) async throws -> [String: Int] {
        try await store.reading { [self] in
            var counts: [String: Int] = [:]
            let rows = try await client.query("""
                SELECT holder, count(*) FROM task_runs WHERE task = \(task) AND status = 'running' AND holder IS NOT NULL GROUP BY holder
                """, logger: logger)
            for try await (holder, count) in rows.decode((String, Int).self) { counts[holder] = count }
            return counts
        }
    }

    // MARK: Claims

    package func claim(_ request: ClaimRequest) async throws -> [TaskRun] {
        let wanted = request.room.filter { $0.value > 0 }.sorted { $0.key < $1.key }
        guard !wanted.isEmpty else { return [] }
        // Runs whose changes wait in this agent's writer are its own: a lapsed one among them
        // ended here while the database was away, its end not written yet.
        let excluding = Array(request.excluding.union(await store.waitingRunIDs()).union(unreadable.withLock { $0 }))
        return try await client.withConnection { connection in
            var claimed: [TaskRun] = []
            // One statement per task, each atomic by itself: a claim of one task needs nothing
            // of another's.
            for (task, room) in wanted {
                let labels = (request.labels[task] ?? []).map { ExecutorSettings.json($0).serialized() }
                let rows = try await connection.execute(Claim(task: task, room: room, holder: request.holder, lease: request.lease, labels: labels,
                                                              excluding: excluding),
                                                        logger: self.logger)
                var batch: [(run: TaskRun, order: (Int16, Double, Int64))] = []
                for try await row in rows {
                    // A record that cannot be read is taken all the same (running under this
                    // claim) but not run: its lease lapses, and another agent may take it.
                    guard var run = Self.decode(row.data) else {
                        setAside(row.id, task: task)
                        continue
                    }
                    Self.overlay(&run, claims: Int(row.claims), started: row.now, holder: request.holder)
                    run.claim = RunClaim(runID: row.id, holder: request.holder, fence: row.fence, leaseUntil: row.leaseUntil)
                    batch.append((run, (row.priority, row.due, row.seq)))
                }
                // RETURNING keeps no order: the queue's.
                batch.sort { a, b in
                    a.order.0 != b.order.0 ? a.order.0 > b.order.0 : a.order.1 != b.order.1 ? a.order.1 < b.order.1 : a.order.2 < b.order.2
                }
                claimed += batch.map(\.run)
            }
            return claimed
        }
    }

    /// Remembers a run whose record cannot be read, saying so once.
    private func setAside(_ id: String, task: String) {
        let first = unreadable.withLock { ids in
            guard ids.count < Self.mostUnreadable else { return false }
            return ids.insert(id).inserted
        }
        guard first else { return }
        logger.warning("fleet: run \(TerminalText.shown(String(id.prefix(200)), keepingLines: false)) of task \(TerminalText.shown(task, keepingLines: false)) has a record this agent cannot read (written by another version, or by other hands); left to its lease and not claimed by this agent again")
    }

    /// A record as its claims since it was written make it: each claim began an attempt, the
    /// last at `started`, under `holder` (the columns a claim writes instead of the record).
    /// Every attempt but the last one claimed was interrupted (its holder's lease lapsed before
    /// it wrote an end), and so was the one the record says is running.
    static func overlay(_ run: inout TaskRun, claims: Int, started: Double?, holder: String?) {
        guard claims > 0 else { return }
        run.interruptions += claims - 1 + (run.status == .running ? 1 : 0)
        run.attempt += claims
        run.status = .running
        run.startedAt = started ?? run.startedAt
        run.nextAttemptAt = nil
        run.agent = holder ?? run.agent
    }

    package func cancelQueued(_ run: TaskRun) async throws -> Bool {
        let columns = Columns([run])
        let rows = try await client.query("""
            UPDATE task_runs t SET status = c.status, finished = c.finished, ended = NULLIF(c.ended, 'NaN'::float8), data = c.data,
                listed = NULLIF(c.listed, ''), listed_for = c.listed_for, holder = NULL, lease_until = NULL, assigned_until = NULL
            FROM unnest(\(columns.ids)::text[], \(columns.statuses)::text[], \(columns.finished)::boolean[], \(columns.ended)::float8[],
                        \(columns.records)::text[], \(columns.listed)::text[], \(columns.listedFor)::int8[])
                AS c(id, status, finished, ended, data, listed, listed_for)
            WHERE t.id = c.id AND t.status IN ('queued', 'retrying')
            RETURNING t.id
            """, logger: logger)
        var cancelled = false
        for try await _ in rows.decode(String.self) { cancelled = true }
        return cancelled
    }

    package func renew(_ claims: [RunClaim], lease: Double) async throws -> Set<String> {
        guard let holder = claims.first?.holder else { return [] }
        let ids = claims.map(\.runID), fences = claims.map(\.fence)
        var held = Set<String>()
        let rows = try await client.query("""
            UPDATE task_runs SET lease_until = \(unescaped: Self.now) + \(lease)
            FROM unnest(\(ids)::text[], \(fences)::bigint[]) AS c(id, fence)
            WHERE task_runs.id = c.id AND task_runs.fence = c.fence AND task_runs.holder = \(holder) AND task_runs.status = 'running'
            RETURNING task_runs.id
            """, logger: logger)
        for try await id in rows.decode(String.self) { held.insert(id) }
        return held
    }

    package func nextLapse(tasks: [String], holder: String) async throws -> Double? {
        guard !tasks.isEmpty else { return nil }
        // Leases of another holder's runs, and holds of runs queued for another agent (least()
        // ignores a NULL).
        let rows = try await client.query("""
            WITH clock AS (SELECT \(unescaped: Self.now) AS t)
            SELECT least(
                (SELECT min(lease_until) FROM task_runs
                 WHERE status = 'running' AND task = ANY(\(tasks)::text[]) AND holder IS NOT NULL AND holder <> \(holder)),
                (SELECT min(assigned_until) FROM task_runs, clock
                 WHERE status IN ('queued', 'retrying') AND task = ANY(\(tasks)::text[]) AND assigned_until > clock.t
                 AND assigned_to <> \(holder))) - clock.t
            FROM clock
            """, logger: logger)
        for try await left in rows.decode(Double?.self) { return left.map { max($0, 0) } }
        return nil
    }

    package func settle(_ run: TaskRun) async throws -> Bool {
        try await client.withTransaction(logger: logger) { connection in
            guard try await Self.writeClaimed(run, on: connection, logger: self.logger) else { return false }
            try await Self.writeAttempts(AttemptColumns([run]), on: connection, logger: self.logger)
            try await Self.trimAttempts(of: [run], on: connection, logger: self.logger)
            return true
        }
    }

    // MARK: Writing (the store's writer, in its transaction)

    /// How many statements ``write(_:on:logger:)`` takes for `batch`: one for the changes of
    /// runs without a claim (and one for their attempts, if any), one for those of claimed runs
    /// (their attempts with them), and one or two to keep long runs' attempts in their bounds.
    static func statements(for batch: [TaskRun]) -> Int {
        let claimed = batch.contains { $0.claim != nil }, plain = batch.contains { $0.claim == nil }
        let plainAttempts = batch.contains { $0.claim == nil && $0.attemptRecord != nil }
        let trims = batch.contains { ($0.attemptRecord?.number ?? 0) > TaskAttempt.keptTails }
        return (claimed ? 1 : 0) + (plain ? 1 : 0) + (plainAttempts ? 1 : 0) + (trims ? 2 : 0)
    }

    /// Writes a batch: the last change of each run; a claimed run's only while its claim
    /// holds. Returns how many claimed changes were refused.
    static func write(_ batch: [TaskRun], on connection: PostgresConnection, logger: Logger) async throws -> Int {
        var last: [String: Int] = [:]
        for (index, run) in batch.enumerated() { last[run.id] = index }
        var plain: [TaskRun] = [], claimed: [TaskRun] = []
        for (index, run) in batch.enumerated() where last[run.id] == index {
            if run.claim != nil { claimed.append(run) } else { plain.append(run) }
        }
        // The attempts' records go with their runs' changes (a statement of their own only when
        // there are some besides claimed runs'), and are kept within their bounds after.
        let refused = try await writeRuns(batch, plain: plain, claimed: claimed, on: connection, logger: logger)
        try await trimAttempts(of: batch, on: connection, logger: logger)
        return refused
    }

    /// ``write(_:on:logger:)``'s runs and their attempts: those of plain runs after them, those
    /// of claimed runs in the claimed runs' statement (written only where the claim holds).
    private static func writeRuns(_ batch: [TaskRun], plain: [TaskRun], claimed: [TaskRun], on connection: PostgresConnection,
                                  logger: Logger) async throws -> Int {
        let claimedIDs = Set(claimed.map(\.id))
        // One statement for each kind of change, whatever the batch's size: a statement per run
        // made the writer's round trips the fleet's limit (issue 26's figure 13). `ended`: NaN
        // stands for none (arrays of optionals are not encoded).
        if !plain.isEmpty {
            let columns = Columns(plain)
            // The assignment is written with the run's first record only (ON CONFLICT leaves it).
            try await connection.query("""
                INSERT INTO task_runs (id, task, status, finished, priority, due, ended, data, listed, listed_for, assigned_to, assigned_until, require)
                SELECT c.id, c.task, c.status, c.finished, c.priority, c.due, NULLIF(c.ended, 'NaN'::float8), c.data, NULLIF(c.listed, ''),
                    c.listed_for, NULLIF(c.assigned, ''), NULLIF(c.until, 'NaN'::float8), NULLIF(c.require, '')::jsonb
                FROM unnest(\(columns.ids)::text[], \(columns.tasks)::text[], \(columns.statuses)::text[], \(columns.finished)::boolean[],
                            \(columns.priorities)::int2[], \(columns.dues)::float8[], \(columns.ended)::float8[], \(columns.records)::text[],
                            \(columns.listed)::text[], \(columns.listedFor)::int8[], \(columns.assigned)::text[], \(columns.holdUntil)::float8[],
                            \(columns.requires)::text[])
                    AS c(id, task, status, finished, priority, due, ended, data, listed, listed_for, assigned, until, require)
                ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, finished = EXCLUDED.finished, priority = EXCLUDED.priority,
                    due = EXCLUDED.due, ended = EXCLUDED.ended, data = EXCLUDED.data, listed = EXCLUDED.listed, listed_for = EXCLUDED.listed_for,
                    claims = 0
                """, logger: logger)
            let attempts = AttemptColumns(batch.filter { !claimedIDs.contains($0.id) })
            if !attempts.runIDs.isEmpty { try await writeAttempts(attempts, on: connection, logger: logger) }
        }
        guard !claimed.isEmpty else { return 0 }
        let columns = Columns(claimed)
        let holders = claimed.map { $0.claim!.holder }, fences = claimed.map { $0.claim!.fence }
        // As writeClaimed, for the whole batch: a run leaving `running` is let go; a change
        // whose claim no longer holds the run is refused (not returned). A claimed run's hold
        // for its assigned agent is spent: a retry goes to any agent.
        let attempts = AttemptColumns(batch.filter { claimedIDs.contains($0.id) })
        let rows = try await connection.execute(ClaimedBatchWrite(columns: columns, holders: holders, fences: fences, attempts: attempts),
                                                logger: logger)
        var written = 0
        for try await _ in rows { written += 1 }
        return claimed.count - written
    }

    /// A batch of runs as column arrays, for `unnest`.
    struct Columns {
        var ids: [String] = [], tasks: [String] = [], statuses: [String] = [], finished: [Bool] = []
        var priorities: [Int16] = [], dues: [Double] = [], ended: [Double] = [], records: [String] = []
        /// Each run's record for lists ("" for none: its record is listed), and the length of
        /// its record in bytes (``PostgresListing``).
        var listed: [String] = [], listedFor: [Int64] = []
        /// The agent a strategy chose ("" for none) and the end of its hold (NaN for none).
        var assigned: [String] = [], holdUntil: [Double] = []
        /// The labels each run requires, as a JSON object ("" for none).
        var requires: [String] = []

        init(_ runs: [TaskRun]) {
            for run in runs {
                ids.append(run.id)
                tasks.append(run.task)
                statuses.append(run.status.rawValue)
                finished.append(run.status.isFinished)
                priorities.append(PostgresRunStore.rank(run))
                dues.append(run.due)
                ended.append(run.endedAt ?? .nan)
                let texts = RecordTexts(run)
                records.append(texts.data)
                listed.append(texts.listed ?? "")
                listedFor.append(Int64(texts.length))
                let until = run.assignmentHoldUntil
                assigned.append(until == nil ? "" : run.assignedAgent ?? "")
                holdUntil.append(until ?? .nan)
                requires.append(run.require.isEmpty ? "" : ExecutorSettings.json(run.require).serialized())
            }
        }
    }

    /// A claimed run's change, if its claim still holds the run. A run leaving `running` is
    /// let go (no holder, no lease: claimable when due if it waits for a retry); its fence
    /// stays, so that the old holder is still refused.
    static func writeClaimed(_ run: TaskRun, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        guard let claim = run.claim else { return false }
        let holds = run.status == .running
        let texts = RecordTexts(run)
        let rows = try await connection.query("""
            UPDATE task_runs SET status = \(run.status.rawValue), finished = \(run.status.isFinished), priority = \(rank(run)),
                due = \(run.due), ended = \(run.endedAt), data = \(texts.data), listed = \(texts.listed), listed_for = \(Int64(texts.length)),
                holder = CASE WHEN \(holds) THEN holder ELSE NULL END, lease_until = CASE WHEN \(holds) THEN lease_until ELSE NULL END,
                assigned_until = NULL, claims = 0
            WHERE id = \(run.id) AND holder = \(claim.holder) AND fence = \(claim.fence)
            RETURNING 1
            """, logger: logger)
        var written = false
        for try await _ in rows { written = true }
        return written
    }

    static func rank(_ run: TaskRun) -> Int16 {
        switch run.priority {
        case .low: 0
        case .normal: 1
        case .high: 2
        case .critical: 3
        }
    }

    static func decode(_ text: String) -> TaskRun? {
        (try? JSONValue.parse(Data(text.utf8))).flatMap(TaskRun.init(stored:))
    }

    /// The columns a run is read from: its record and what its claims since lay over it.
    private static let record = "data, claims, started, holder"

    private func decodeRuns(_ rows: PostgresRowSequence) async throws -> [TaskRun] {
        var runs: [TaskRun] = []
        for try await (data, claims, started, holder) in rows.decode((String, Int32, Double?, String?).self) {
            guard var run = Self.decode(data) else { continue }
            Self.overlay(&run, claims: Int(claims), started: started, holder: holder)
            runs.append(run)
        }
        return runs
    }
}
#endif
