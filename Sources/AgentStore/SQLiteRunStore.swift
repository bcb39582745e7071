import AgentBase
import AgentWork
import Foundation
import GRDB
import JSONSchema

/// Task runs in the agent's SQLite store (table `task_runs`, their attempts in `task_attempts`,
/// written in the same transaction and deleted with their run): changes go through the store's
/// batching writer thread (``AgentStore/recordRun(_:)``), reads use a read-only connection of
/// their own, which WAL mode lets run beside the writer. Reads and claims run on a dispatch
/// queue, never on the caller's thread (the loop, or Swift's cooperative pool).
package final class SQLiteRunStore: RunStore {
    package let store: AgentStore
    private let reader: DatabaseQueue

    package init(store: AgentStore) throws {
        self.store = store
        reader = try AgentStore.readOnlyQueue(path: store.path)
    }

    package func record(_ run: TaskRun) { store.recordRun(run) }

    package var refusedWrites: Int { store.statistics.refusedRunWrites }

    package var keepsChangesNow: Bool { store.keepsChangesNow }

    package var writesNow: Bool { store.writesNow }

    package func whenKept(_ runID: String, done: @escaping @Sendable (Bool) -> Void) { store.whenRunKept(runID, done: done) }

    /// In the writer's next transaction, as a schedule's fire writes its runs.
    package func commitNew(_ runs: [TaskRun], done: @escaping @Sendable (Bool) -> Void) {
        store.commitSchedules(ScheduleCommit(runs: runs), done: done)
    }

    /// In the run journal, while the store writes (while it does not, the request waits for
    /// the store's answer, and is refused).
    package func journalNew(_ run: TaskRun) -> Bool {
        guard store.statistics.degraded == nil, let seq = store.runJournal.append(run) else { return false }
        store.recordRun(run, journaled: seq)
        return true
    }

    package func flush() async {
        // Nothing waits: no empty commit (`task runs` flushes before it reads).
        if store.isSettled { return }
        await withCheckedContinuation { continuation in
            store.commitSchedules(ScheduleCommit()) { _ in continuation.resume() }
        }
    }

    package func loadUnfinished() async throws -> [TaskRun] {
        try await Self.offThread { [reader] in
            try reader.read { db in
                // One record at a time, its large input held as its text: 400 queued runs of a
                // MiB, read whole and then as values, once took a start past 5 GB.
                var runs: [TaskRun] = []
                let records = try String.fetchCursor(db, sql: "SELECT data FROM task_runs WHERE finished = 0 ORDER BY row")
                while let record = try records.next() {
                    guard var run = Self.decode(record) else { continue }
                    run.holdLargeInputAsText()
                    runs.append(run)
                }
                return runs
            }
        }
    }

    package func list(_ filter: RunFilter) async throws -> RunListPage<TaskRun> {
        let journal = journalWhileUnwritten
        return try await Self.offThread { [reader] in
            try journal.map { try Self.list(filter, reader: reader, journal: $0) } ?? Self.list(filter, reader: reader)
        }
    }

    /// The runs `filter` picks, newest first, read on the caller's thread (already off the
    /// loop; `agent-control task runs` beside a stopped agent): each run's record for lists
    /// (without its long members, see ``RunListing``) where it has one, until the records read
    /// come to ``RunListing/readLimit`` bytes.
    package static func list(_ filter: RunFilter, reader: DatabaseQueue) throws -> RunListPage<TaskRun> {
        var conditions: [String] = []
        var values: [String] = []
        if let task = filter.task {
            conditions.append("task = ?")
            values.append(task)
        }
        if let status = filter.status {
            conditions.append("status = ?")
            values.append(status.rawValue)
        }
        let clause = conditions.isEmpty ? "" : "WHERE " + conditions.joined(separator: " AND ")
        let sql = "SELECT \(listedRecord) FROM task_runs \(clause) ORDER BY row DESC LIMIT \(max(filter.limit, 0))"
        return try reader.read { db in
            try Self.readListed(String.fetchCursor(db, sql: sql, arguments: StatementArguments(values))) { TaskRun(stored: $0) }
        }
    }

    /// The column a list reads: a run's record for lists while it is its record's (its
    /// `record_length` is the record's length in bytes: a runtime from before migration
    /// v11-listed-runs rewrites the record alone), else the record.
    package static let listedRecord = """
        CASE WHEN listed IS NOT NULL AND json_extract(listed, '$.record_length') = length(CAST(data AS BLOB)) THEN listed ELSE data END
        """

    /// The records of `texts` (each a record for lists or a record) as runs (``RunListReader``).
    /// `unshown`: members no list shows, never named as left out.
    package static func readListed<Run>(_ texts: some Cursor<String>, unshown: Set<String> = [],
                                        _ decode: (JSONValue) -> Run?) throws -> RunListPage<Run> {
        var reader = RunListReader<Run>(unshown: unshown)
        while !reader.full, let text = try texts.next() { reader.add(text, decode) }
        return reader.page
    }

    package func run(id: String) async throws -> TaskRun? {
        let journal = journalWhileUnwritten
        return try await Self.offThread { [reader] in
            try journal.map { try Self.readRun(id: id, reader: reader, journal: $0) } ?? Self.readRun(id: id, reader: reader)
        }
    }

    /// One run, read on the caller's thread (already off the loop).
    package static func readRun(id: String, reader: DatabaseQueue) throws -> TaskRun? {
        try reader.read { db in try readRun(id: id, in: db) }
    }

    package static func readRun(id: String, in db: Database) throws -> TaskRun? {
        try String.fetchOne(db, sql: "SELECT data FROM task_runs WHERE id = ?", arguments: [id]).flatMap(Self.decode)
    }

    package func attempts(of runID: String) async throws -> [TaskAttempt] {
        let journal = journalWhileUnwritten
        return try await Self.offThread { [reader] in
            try journal.map { try Self.readAttempts(of: runID, reader: reader, journal: $0) } ?? Self.readAttempts(of: runID, reader: reader)
        }
    }

    /// The attempts of one run, read on the caller's thread (already off the loop).
    package static func readAttempts(of runID: String, reader: DatabaseQueue) throws -> [TaskAttempt] {
        try reader.read { db in
            try Row.fetchAll(db, sql: "SELECT data, stderr_tail, stdout_tail FROM task_attempts WHERE run_id = ? ORDER BY attempt",
                             arguments: [runID]).compactMap { row in
                let data: String = row["data"]
                return (try? JSONValue.parse(Data(data.utf8))).flatMap {
                    TaskAttempt(stored: $0, stderrTail: row["stderr_tail"], stdoutTail: row["stdout_tail"])
                }
            }
        }
    }

    package func prune(endedBefore: Double?, keeping: Int?) async throws -> Int {
        try await Self.offThread { [store] in
            try store.withWriter { db in
                // Read on the writer, where the journal is pinned (see RunJournal.keepsRunsFromPruning).
                store.runJournal.keepsRunsFromPruning ? 0 : try Self.prune(endedBefore: endedBefore, keeping: keeping, in: db)
            }
        }
    }

    // MARK: Claims

    package func claim(_ request: ClaimRequest) async throws -> [TaskRun] {
        try await Self.offThread { [store] in
            try store.withWriter { db in try Self.claim(request, now: Date().timeIntervalSince1970, in: db) }
        }
    }

    package func renew(_ claims: [RunClaim], lease: Double) async throws -> Set<String> {
        try await Self.offThread { [store] in
            try store.withWriter { db in
                let until = Date().timeIntervalSince1970 + lease
                var held = Set<String>()
                let update = try db.cachedStatement(sql: """
                    UPDATE task_runs SET lease_until = ? WHERE id = ? AND holder = ? AND fence = ? AND status = 'running'
                    """)
                for claim in claims {
                    try update.execute(arguments: [until, claim.runID, claim.holder, claim.fence])
                    if db.changesCount > 0 { held.insert(claim.runID) }
                }
                return held
            }
        }
    }

    package func nextLapse(tasks: [String], holder: String) async throws -> Double? {
        guard !tasks.isEmpty else { return nil }
        let sql = """
            SELECT min(lease_until) FROM task_runs WHERE status = 'running' AND holder IS NOT NULL AND holder <> ?
            AND task IN (\(tasks.map { _ in "?" }.joined(separator: ", ")))
            """
        let held = """
            SELECT data FROM task_runs WHERE finished = 0 AND status = 'queued'
            AND task IN (\(tasks.map { _ in "?" }.joined(separator: ", ")))
            """
        let arguments = [holder] + tasks
        return try await Self.offThread { [reader] in
            try reader.read { db in
                let now = Date().timeIntervalSince1970
                var first = try Double.fetchOne(db, sql: sql, arguments: StatementArguments(arguments)).map { max($0, now) }
                // Runs held for another agent: claimable by this one when their hold ends.
                for data in try String.fetchAll(db, sql: held, arguments: StatementArguments(tasks)) {
                    guard let run = Self.decode(data), run.assignedAgent != holder, let until = run.assignmentHoldUntil, until > now else { continue }
                    first = min(first ?? until, until)
                }
                return first.map { $0 - now }
            }
        }
    }

    package func settle(_ run: TaskRun) async throws -> Bool {
        try await Self.offThread { [store] in
            try store.withWriter { db in
                guard try Self.writeClaimed(run, in: db) else { return false }
                try Self.writeAttempt(of: run, in: db)
                return true
            }
        }
    }

    /// The candidates are few (unfinished runs of the tasks asked for): ordered here rather
    /// than by columns the local hot path would have to fill.
    package static func claim(_ request: ClaimRequest, now: Double, in db: Database) throws -> [TaskRun] {
        var claimed: [TaskRun] = []
        for (task, room) in request.room.sorted(by: { $0.key < $1.key }) where room > 0 {
            let rows = try Row.fetchAll(db, sql: """
                SELECT row, data FROM task_runs WHERE finished = 0 AND task = ?
                AND (status IN ('queued', 'retrying') OR (status = 'running' AND lease_until IS NOT NULL AND lease_until < ?))
                """, arguments: [task, now])
            var candidates: [(row: Int64, run: TaskRun)] = rows.compactMap { row -> (row: Int64, run: TaskRun)? in
                guard let run = decode(row["data"]), !request.excluding.contains(run.id) else { return nil }
                // A run held for the agent its strategy chose waits for that agent until the hold ends.
                let held = run.assignmentHoldUntil.map { $0 > now && run.assignedAgent != request.holder } ?? false
                guard request.allows(task: task, require: run.require) else { return nil }
                return run.status == .running || (run.due <= now && !held) ? (row["row"], run) : nil
            }
            candidates.sort { a, b in
                if a.run.priority != b.run.priority { return a.run.priority > b.run.priority }
                if a.run.due != b.run.due { return a.run.due < b.run.due }
                return a.row < b.row
            }
            for (_, candidate) in candidates.prefix(room) {
                try db.execute(sql: "UPDATE claim_fence SET value = value + 1 WHERE id = 1")
                let fence = try Int64.fetchOne(db, sql: "SELECT value FROM claim_fence WHERE id = 1") ?? 0
                var run = candidate
                // A lapsed run: its holder died (or stopped answering) while the attempt ran.
                if run.status == .running { run.interruptions += 1 }
                run.attempt += 1
                run.status = .running
                run.startedAt = now
                run.nextAttemptAt = nil
                run.claim = RunClaim(runID: run.id, holder: request.holder, fence: fence, leaseUntil: now + request.lease)
                run.agent = request.holder
                let texts = RecordTexts(run)
                try db.execute(sql: """
                    UPDATE task_runs SET status = 'running', holder = ?, fence = ?, lease_until = ?, data = ?, listed = ? WHERE id = ?
                    """, arguments: [request.holder, fence, now + request.lease, texts.data, texts.listed, run.id])
                claimed.append(run)
            }
        }
        return claimed
    }

    /// Writes a claimed run's change if its claim still holds it. A run that leaves `running`
    /// is let go (no holder, no lease); its fence stays, so a stale holder is still refused.
    package static func writeClaimed(_ run: TaskRun, in db: Database) throws -> Bool {
        guard let claim = run.claim else { return false }
        let holds = run.status == .running
        let texts = RecordTexts(run)
        try db.execute(sql: """
            UPDATE task_runs SET status = ?, finished = ?, ended = ?, data = ?, listed = ?,
                holder = CASE WHEN ? THEN holder ELSE NULL END, lease_until = CASE WHEN ? THEN lease_until ELSE NULL END
            WHERE id = ? AND holder = ? AND fence = ?
            """, arguments: [run.status.rawValue, run.status.isFinished ? 1 : 0, run.endedAt, texts.data, texts.listed,
                             holds, holds, run.id, claim.holder, claim.fence])
        return db.changesCount > 0
    }

    package static func decode(_ text: String) -> TaskRun? {
        (try? JSONValue.parse(Data(text.utf8))).flatMap(TaskRun.init(stored:))
    }

    /// Threads of their own for the stores' reads: Dispatch's global queue, used before, has as
    /// many threads as cores here, shared with everything else of the process, and reads that
    /// waited there behind others (a long retention pass) left workflow steps found again after
    /// a restart unanswered for over a minute on a loaded machine.
    static let reads = BlockingPool(name: "agent-run-read", width: 8)

    /// Runs `body` on a thread of ``reads`` and awaits it: SQLite calls block, and must block
    /// neither the loop nor Swift's cooperative threads.
    package static func offThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await reads.run { Result { try body() } }.get()
    }

    /// Writes a batch of changes (on the store's writer thread, in its transaction): only the
    /// last change of each run in the batch is written. Returns how many changes of claimed
    /// runs were refused (their claim no longer holds).
    @discardableResult
    package static func write(_ batch: [TaskRun], in db: Database) throws -> Int {
        var last: [String: Int] = [:]
        last.reserveCapacity(batch.count)
        for (index, run) in batch.enumerated() { last[run.id] = index }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO task_runs (id, task, status, finished, ended, data, listed, idempotency_key) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
            ON CONFLICT(id) DO UPDATE SET status = excluded.status, finished = excluded.finished, ended = excluded.ended,
                data = excluded.data, listed = excluded.listed
            """)
        var refused = Set<String>()
        for (index, run) in batch.enumerated() where last[run.id] == index {
            if run.claim != nil {
                if try !writeClaimed(run, in: db) { refused.insert(run.id) }
                continue
            }
            let texts = RecordTexts(run)
            try upsert.execute(arguments: [run.id, run.task, run.status.rawValue, run.status.isFinished ? 1 : 0, run.endedAt,
                                           texts.data, texts.listed, run.idempotencyKey])
        }
        // The last change of each attempt in the batch (a run's attempt may end and the next
        // begin in one batch), but none of a claim that no longer holds its run.
        var lastAttempt: [AttemptKey: Int] = [:]
        for (index, run) in batch.enumerated() {
            if let record = run.attemptRecord { lastAttempt[AttemptKey(run: run.id, number: record.number)] = index }
        }
        for (index, run) in batch.enumerated() {
            guard let record = run.attemptRecord, lastAttempt[AttemptKey(run: run.id, number: record.number)] == index,
                  !refused.contains(run.id) else { continue }
            try writeAttempt(of: run, in: db)
        }
        return refused.count
    }

    private struct AttemptKey: Hashable {
        var run: String
        var number: Int
    }

    /// Writes the run's attempt record (insert or replace), and keeps the run's attempts within
    /// their bounds: the tails of all but the newest ``TaskAttempt/keptTails`` let go, and all
    /// but the first and the newest ``TaskAttempt/keptAttempts`` - 1 attempts deleted.
    package static func writeAttempt(of run: TaskRun, in db: Database) throws {
        guard let record = run.attemptRecord else { return }
        let upsert = try db.cachedStatement(sql: """
            INSERT INTO task_attempts (run_id, attempt, status, data, stderr_tail, stdout_tail) VALUES (?, ?, ?, ?, ?, ?)
            ON CONFLICT(run_id, attempt) DO UPDATE SET status = excluded.status, data = excluded.data,
                stderr_tail = excluded.stderr_tail, stdout_tail = excluded.stdout_tail
            """)
        try upsert.execute(arguments: [run.id, record.number, record.status.rawValue, record.storedJSON.serialized(),
                                       record.stderrTail, record.stdoutTail])
        let number = record.number
        if number > TaskAttempt.keptTails {
            try db.execute(sql: """
                UPDATE task_attempts SET stderr_tail = NULL, stdout_tail = NULL
                WHERE run_id = ? AND attempt <= ? AND (stderr_tail IS NOT NULL OR stdout_tail IS NOT NULL)
                """, arguments: [run.id, number - TaskAttempt.keptTails])
        }
        if number > TaskAttempt.keptAttempts {
            try db.execute(sql: "DELETE FROM task_attempts WHERE run_id = ? AND attempt > 1 AND attempt <= ?",
                           arguments: [run.id, number - TaskAttempt.keptAttempts + 1])
        }
    }

    /// Deletes finished runs beyond the retention limits (unfinished ones are never deleted).
    package static func prune(endedBefore: Double?, keeping: Int?, in db: Database) throws -> Int {
        // Each run's attempts go with it: deleted first, by the same conditions.
        var deleted = 0
        if let endedBefore {
            try db.execute(sql: "DELETE FROM task_attempts WHERE run_id IN (SELECT id FROM task_runs WHERE finished = 1 AND ended < ?)",
                           arguments: [endedBefore])
            deleted += try AgentStore.prune("task_runs", finished: "finished = 1", time: "ended", before: endedBefore, keeping: nil, in: db)
        }
        if let keeping {
            try db.execute(sql: """
                DELETE FROM task_attempts WHERE run_id IN (SELECT id FROM task_runs WHERE finished = 1 AND row <= (
                    SELECT row FROM task_runs WHERE finished = 1 ORDER BY row DESC LIMIT 1 OFFSET ?))
                """, arguments: [keeping])
            deleted += try AgentStore.prune("task_runs", finished: "finished = 1", time: "ended", before: nil, keeping: keeping, in: db)
        }
        return deleted
    }
}
