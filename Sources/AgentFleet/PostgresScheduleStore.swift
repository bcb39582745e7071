#if Fleet
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// Schedules' state and history in the fleet's PostgreSQL database, and the leadership that
/// lets one agent fire them (table `leases`, row `schedules`). A fire's run request, state and
/// history are written in one transaction, after checking (and locking) the leadership it was
/// made under: a leader that lost its lease cannot fire a time the next leader fires.
public final class PostgresScheduleStore: ScheduleStore {
    let store: FleetWriter

    init(store: FleetWriter) { self.store = store }

    static let leaseName = "schedules"
    private static let now = PostgresMigrations.now

    package func commit(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
        store.enqueue(change, done: done)
    }

    package func pruneHistory(before: Double?, keeping: Int?) async throws -> Int {
        try await PostgresRunStore.prune("schedule_history", key: "row", finished: "true", time: "actual", order: "row", before: before, keeping: keeping,
                                         client: store.client, logger: store.logger)
    }

    package func loadStates() async throws -> [String: ScheduleState] {
        try store.requireJoined()
        var states: [String: ScheduleState] = [:]
        for try await data in try await store.client.query("SELECT data FROM schedules", logger: store.logger).decode(String.self) {
            guard let state = (try? JSONValue.parse(Data(data.utf8))).flatMap(ScheduleState.init(stored:)) else { continue }
            states[state.name] = state
        }
        return states
    }

    package func history(schedule: String, limit: Int) async throws -> [ScheduleHistoryEntry] {
        try await store.reading { [self] in
            let rows = try await store.client.query("""
                SELECT planned, actual, outcome, run_id, data FROM schedule_history WHERE schedule = \(schedule) ORDER BY row DESC LIMIT \(max(limit, 0))
                """, logger: store.logger)
            var lines: [ScheduleHistoryEntry] = []
            for try await (planned, actual, outcome, runID, data) in rows.decode((Double?, Double, String, String?, String).self) {
                guard let outcome = ScheduleHistoryEntry.Outcome(rawValue: outcome) else { continue }
                let extra = (try? JSONValue.parse(Data(data.utf8))) ?? .object([:])
                lines.append(ScheduleHistoryEntry(schedule: schedule, planned: planned, actual: actual, outcome: outcome, runID: runID,
                                                  reason: extra["reason"]?.stringValue, count: extra["count"]?.numberValue?.intValue ?? 1,
                                                  firstPlanned: extra["first_planned"]?.numberValue?.doubleValue))
            }
            return lines
        }
    }

    package func lead(holder: String, lease: Double) async throws -> Leadership? {
        // Taken when free or lapsed (a new fence), renewed by its holder (the same fence); by an
        // agent only while its `fleet_agents` row is its own: one stopped past three heartbeats,
        // whose agent_id another has taken meanwhile, held the same lease as the other on resuming.
        let member = store.member
        let rows = try await store.client.query("""
            INSERT INTO leases AS l (name, holder, fence, expires)
            SELECT \(Self.leaseName), \(holder), 1, \(unescaped: Self.now) + \(lease)
            WHERE \(member == nil) OR EXISTS (SELECT 1 FROM fleet_agents WHERE agent_id = \(holder) AND strpos(data, \(member ?? "")) > 0)
            ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder,
                fence = CASE WHEN l.holder = EXCLUDED.holder AND l.expires >= \(unescaped: Self.now) THEN l.fence ELSE l.fence + 1 END,
                expires = EXCLUDED.expires
            WHERE l.holder = EXCLUDED.holder OR l.expires < \(unescaped: Self.now)
            RETURNING fence, expires
            """, logger: store.logger)
        // Every row read, so that the statement has committed before the lead is taken.
        var taken: Leadership?
        for try await (fence, expires) in rows.decode((Int64, Double).self) {
            taken = Leadership(holder: holder, fence: fence, until: expires)
        }
        return taken
    }

    package func currentLeader() async throws -> Leadership? {
        try await store.reading { [self] in
            let rows = try await store.client.query("""
                SELECT holder, fence, expires FROM leases WHERE name = \(Self.leaseName) AND expires >= \(unescaped: Self.now)
                """, logger: store.logger)
            var found: Leadership?
            for try await (holder, fence, expires) in rows.decode((String, Int64, Double).self) {
                found = Leadership(holder: holder, fence: fence, until: expires)
            }
            return found
        }
    }

    /// Writes one commit in the writer's transaction; false (nothing written) when it was
    /// made under a leadership that no longer holds, or (`member`, an agent's store) by an agent
    /// whose `fleet_agents` row another has taken. The lease row (and the agent's) stays locked
    /// until the transaction ends, so that no new leader takes over halfway. Workflow runs the
    /// fires start are written with them, held by the leader (a lease of `lease` seconds).
    static func write(_ commit: ScheduleCommit, lease: Double, member: String?, on connection: PostgresConnection, logger: Logger) async throws -> Bool {
        if let leader = commit.leader {
            var holds = false
            let check: PostgresQuery = if let member {
                """
                SELECT 1 FROM leases JOIN fleet_agents ON fleet_agents.agent_id = leases.holder
                WHERE name = \(leaseName) AND holder = \(leader.holder) AND fence = \(leader.fence) AND expires >= \(unescaped: now)
                AND strpos(fleet_agents.data, \(member)) > 0 FOR SHARE
                """
            } else {
                """
                SELECT 1 FROM leases WHERE name = \(leaseName) AND holder = \(leader.holder) AND fence = \(leader.fence)
                AND expires >= \(unescaped: now) FOR SHARE
                """
            }
            for try await _ in try await connection.query(check, logger: logger) {
                holds = true
            }
            guard holds else { return false }
        }
        if !commit.runs.isEmpty { _ = try await PostgresRunStore.write(commit.runs, on: connection, logger: logger) }
        for run in commit.workflowRuns {
            _ = try await PostgresWorkflowStore.write(WorkflowCommit(runs: [run]), lease: lease, on: connection, logger: logger)
        }
        let updated = Date().timeIntervalSince1970
        for name in commit.removed {
            try await connection.query("DELETE FROM schedules WHERE name = \(name)", logger: logger)
        }
        for state in commit.states {
            try await connection.query("""
                INSERT INTO schedules (name, data, updated) VALUES (\(state.name), \(state.json.serialized()), \(updated))
                ON CONFLICT (name) DO UPDATE SET data = EXCLUDED.data, updated = EXCLUDED.updated
                """, logger: logger)
        }
        for entry in commit.history {
            try await connection.query("""
                INSERT INTO schedule_history (schedule, planned, actual, outcome, run_id, data)
                VALUES (\(entry.schedule), \(entry.planned), \(entry.actual), \(entry.outcome.rawValue), \(entry.runID), \(entry.storedJSON.serialized()))
                """, logger: logger)
        }
        return true
    }
}
#endif
