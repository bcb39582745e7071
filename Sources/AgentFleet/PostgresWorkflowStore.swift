#if Fleet
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// Workflow runs and their step logs in the fleet's PostgreSQL database (tables
/// `workflow_runs` and `workflow_steps`). Each unfinished run is held by one agent under a
/// lease with a fencing token (from the task runs' sequence, `run_fence`): a commit is
/// written only while its claim holds the run, and a run whose lease lapsed is taken by
/// another agent with a new token.
///
/// An actor, like ``FleetWriter``: commits are handed over through a ``Handoff`` (a
/// synchronous, ordered yield) and written by the actor, one transaction per batch in the order
/// handed over, so that the loop never waits and the task runs' writes never wait behind them.
/// While the database is away they wait and are written when it is back: the engine, which
/// advances a run only once its commit is written, pauses the run meanwhile.
public actor PostgresWorkflowStore: SharedWorkflowStore, HandoffReceiver {
    nonisolated let store: FleetWriter
    /// Its ``backlog``: the commits waiting to be written.
    nonisolated let handoff = Handoff<Pending>(counting: true)

    private var pending: [Pending] = []
    private var closed = false
    private var wake: CheckedContinuation<Void, Never>?
    private static let now = PostgresMigrations.now

    /// A commit handed over, and whom to tell what became of it.
    struct Pending: Sendable {
        var change: WorkflowCommit
        var done: @Sendable (WorkflowCommitOutcome) -> Void
    }

    init(store: FleetWriter) {
        self.store = store
    }

    nonisolated var joinGate: FleetJoin? { store.join }

    private nonisolated var client: PostgresClient { store.client }
    private nonisolated var logger: Logger { store.logger }

    // MARK: WorkflowStore

    package nonisolated func commit(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void) {
        handoff.yield(Pending(change: change, done: done))
    }

    package nonisolated func loadUnfinished() async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] {
        try store.requireJoined()
        return try await client.withConnection { connection in
            var runs: [WorkflowRun] = []
            for try await data in try await connection.query("SELECT data FROM workflow_runs WHERE NOT finished ORDER BY seq", logger: self.logger).decode(String.self) {
                if let run = Self.decodeRun(data) { runs.append(run) }
            }
            let steps = try await Self.steps(of: runs.map(\.id), on: connection, logger: self.logger)
            return runs.map { ($0, steps[$0.id] ?? []) }
        }
    }

    /// Each run without its members longer than ``RunListing/storedMemberLimit``
    /// (``PostgresListing``); ``RunListing`` leaves out the shorter long ones.
    package nonisolated func list(_ filter: WorkflowRunFilter) async throws -> RunListPage<WorkflowRun> {
        try await store.reading { [self] in
            let status = filter.status?.rawValue
            let rows = try await client.query("""
                \(unescaped: PostgresListing.select()) FROM (SELECT *, \(unescaped: PostgresListing.fresh) AS fresh
                FROM workflow_runs WHERE (\(filter.workflow)::text IS NULL OR workflow = \(filter.workflow)) AND (\(status)::text IS NULL OR status = \(status))
                ORDER BY seq DESC LIMIT \(max(filter.limit, 0))) t \(unescaped: PostgresListing.measured)
                """, logger: logger)
            var reader = RunListReader<WorkflowRun>(unshown: ["definition"])
            for try await (data, omitted) in rows.decode((String, [String]?).self) {
                reader.add(data, omitted: omitted, WorkflowRun.init(listed:))
            }
            return reader.page
        }
    }

    package nonisolated func run(id: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        try await store.reading(refusingWhileDegraded: false) { [self] in
            return try await client.withConnection { connection in
                var found: WorkflowRun?
                for try await data in try await connection.query("SELECT data FROM workflow_runs WHERE id = \(id)", logger: self.logger).decode(String.self) {
                    found = Self.decodeRun(data)
                }
                guard let run = found else { return nil }
                return (run, try await Self.steps(of: [id], on: connection, logger: self.logger)[id] ?? [])
            }
        }
    }

    /// Deletes the runs' step logs in the same statement (a data-modifying `WITH`), then, in a
    /// statement of its own in the same transaction, the keys in shared memory of every run
    /// that is gone: it sees a key whose write the runs' delete waited for (see
    /// ``PostgresMemoryStore``), and keys an older version left behind; should it fail, no run
    /// went either, so no run's keys are left behind.
    package nonisolated func prune(endedBefore: Double?, keeping: Int?) async throws -> Int {
        try await PostgresRunStore.prune("workflow_runs", finished: "finished", time: "ended", order: "seq", before: endedBefore, keeping: keeping,
                                         client: client, logger: logger,
                                         then: "DELETE FROM workflow_steps WHERE run_id IN (SELECT id FROM gone)",
                                         last: """
                                            DELETE FROM memory m WHERE starts_with(m.scope, 'run:')
                                            AND NOT EXISTS (SELECT 1 FROM workflow_runs r WHERE r.id = substr(m.scope, 5))
                                            """)
    }

    // MARK: SharedWorkflowStore

    package nonisolated func startToken(holder: String) async throws -> Int64 {
        for try await token in try await client.query("SELECT nextval('run_fence')", logger: logger).decode(Int64.self) { return token }
        throw FleetStoreError(code: "unavailable", message: "the fleet's database gave no fencing token")
    }

    package nonisolated func claim(holder: String, token: Int64, lease: Double, limit: Int) async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] {
        guard limit > 0 else { return [] }
        return try await client.withTransaction(logger: logger) { connection in
            let rows = try await connection.query("""
                WITH clock AS (SELECT \(unescaped: Self.now) AS t),
                picked AS (
                    SELECT id FROM workflow_runs, clock WHERE NOT finished
                    AND (lease_until < clock.t OR (holder = \(holder) AND fence < \(token)))
                    ORDER BY seq LIMIT \(limit)
                    FOR UPDATE OF workflow_runs SKIP LOCKED)
                UPDATE workflow_runs r SET holder = \(holder), fence = nextval('run_fence'), lease_until = clock.t + \(lease)
                FROM picked, clock WHERE r.id = picked.id
                RETURNING r.data, r.fence, r.lease_until, r.seq
                """, logger: logger)
            var taken: [(run: WorkflowRun, seq: Int64)] = []
            for try await (data, fence, leaseUntil, seq) in rows.decode((String, Int64, Double, Int64).self) {
                guard var run = Self.decodeRun(data) else { continue }
                run.claim = RunClaim(runID: run.id, holder: holder, fence: fence, leaseUntil: leaseUntil)
                taken.append((run, seq))
            }
            // RETURNING keeps no order: the runs' own.
            taken.sort { $0.seq < $1.seq }
            let steps = try await Self.steps(of: taken.map(\.run.id), on: connection, logger: logger)
            return taken.map { ($0.run, steps[$0.run.id] ?? []) }
        }
    }

    package nonisolated func renew(_ claims: [RunClaim], lease: Double) async throws -> Set<String> {
        guard let holder = claims.first?.holder else { return [] }
        let ids = claims.map(\.runID), fences = claims.map(\.fence)
        var held = Set<String>()
        let rows = try await client.query("""
            UPDATE workflow_runs SET lease_until = \(unescaped: Self.now) + \(lease)
            FROM unnest(\(ids)::text[], \(fences)::bigint[]) AS c(id, fence)
            WHERE workflow_runs.id = c.id AND workflow_runs.fence = c.fence AND workflow_runs.holder = \(holder)
            RETURNING workflow_runs.id
            """, logger: logger)
        for try await id in rows.decode(String.self) { held.insert(id) }
        return held
    }

    // MARK: The writer

    func take(_ item: Pending) {
        pending.append(item)
        wake?.resume()
        wake = nil
    }

    /// The hand-over has ended (``stop()``): what waits is not written (its runs resume from
    /// the step log elsewhere).
    func handoffEnded() {
        closed = true
        wake?.resume()
        wake = nil
    }

    func writeLoop() async {
        while !Task.isCancelled, !closed {
            if pending.isEmpty {
                await withCheckedContinuation { wake = $0 }
                continue
            }
            let batch = Array(pending.prefix(1_000))
            pending.removeFirst(batch.count)
            do {
                let logger = logger, lease = store.settings.lease
                let outcomes = try await client.withTransaction(logger: logger) { connection in
                    var outcomes: [WorkflowCommitOutcome] = []
                    for item in batch {
                        outcomes.append(try await Self.write(item.change, lease: lease, on: connection, logger: logger) ? .written : .refused)
                    }
                    return outcomes
                }
                handoff.done(batch.count)
                for (item, outcome) in zip(batch, outcomes) { item.done(outcome) }
            } catch {
                // They wait for the database (their runs pause meanwhile), first in line.
                logger.debug("fleet: cannot write workflow step logs (\(FleetStoreError.describe(error))); they wait")
                pending.insert(contentsOf: batch, at: 0)
                try? await Task.sleep(for: .seconds(1))
            }
        }
    }

    /// Writes one commit in the caller's transaction; false (nothing written) when a claim it is
    /// made under no longer holds its run. A new run is written under its claim, with a lease
    /// of `lease` seconds.
    static func write(_ change: WorkflowCommit, lease: Double, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        var checked = Set<String>()
        for run in change.runs {
            guard let claim = run.claim ?? change.claim.flatMap({ $0.runID == run.id ? $0 : nil }) else { continue }
            guard try await holds(claim, newRunAllowed: true, on: connection, logger: logger) else { return false }
            checked.insert(run.id)
        }
        if let claim = change.claim, !checked.contains(claim.runID) {
            guard try await holds(claim, newRunAllowed: false, on: connection, logger: logger) else { return false }
        }
        for run in change.runs {
            let claim = run.claim ?? change.claim.flatMap { $0.runID == run.id ? $0 : nil }
            let texts = RecordTexts(run.storedJSON)
            try await connection.query("""
                INSERT INTO workflow_runs (id, workflow, status, finished, ended, holder, fence, lease_until, data, listed, listed_for)
                VALUES (\(run.id), \(run.workflow), \(run.status.rawValue), \(run.status.isFinished), \(run.endedAt), \(claim?.holder), \(claim?.fence),
                        \(unescaped: now) + \(lease), \(texts.data), \(texts.listed), \(Int64(texts.length)))
                ON CONFLICT (id) DO UPDATE SET status = EXCLUDED.status, finished = EXCLUDED.finished, ended = EXCLUDED.ended, data = EXCLUDED.data,
                    listed = EXCLUDED.listed, listed_for = EXCLUDED.listed_for
                """, logger: logger)
        }
        for step in change.steps {
            try await connection.query("""
                INSERT INTO workflow_steps (run_id, step, generation, status, data)
                VALUES (\(step.runID), \(step.stepID), \(step.generation), \(step.status.rawValue), \(step.storedJSON.serialized()))
                ON CONFLICT (run_id, step, generation) DO UPDATE SET status = EXCLUDED.status, data = EXCLUDED.data
                """, logger: logger)
        }
        return true
    }

    /// Whether `claim` holds its run (locked until the transaction ends, so that no claim takes
    /// it halfway); a run not written yet is held by the claim that writes it first.
    private static func holds(_ claim: RunClaim, newRunAllowed: Bool, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        let rows = try await connection.query("SELECT holder, fence FROM workflow_runs WHERE id = \(claim.runID) FOR UPDATE", logger: logger)
        for try await (holder, fence) in rows.decode((String?, Int64?).self) {
            return holder == claim.holder && fence == claim.fence
        }
        return newRunAllowed
    }

    private static func steps(of runs: [String], on connection: PostgresConnection, logger: Logger) async throws -> [String: [WorkflowStepRecord]] {
        guard !runs.isEmpty else { return [:] }
        var steps: [String: [WorkflowStepRecord]] = [:]
        let rows = try await connection.query("SELECT run_id, data FROM workflow_steps WHERE run_id = ANY(\(runs)::text[]) ORDER BY row", logger: logger)
        for try await (run, data) in rows.decode((String, String).self) {
            if let record = (try? JSONValue.parse(Data(data.utf8))).flatMap(WorkflowStepRecord.init(stored:)) { steps[run, default: []].append(record) }
        }
        return steps
    }

    static func decodeRun(_ text: String) -> WorkflowRun? {
        (try? JSONValue.parse(Data(text.utf8))).flatMap(WorkflowRun.init(stored:))
    }
}
#endif
