#if Fleet
import PostgresNIO

/// The queue's hot statements, prepared once per connection (postgres-nio keeps them by name):
/// a claim and a result batch then cost the server no parsing nor, after its first few
/// executions, planning — which took as long as executing them (issue 26's figure 13).
extension PostgresRunStore {
    /// Claims up to `room` runs of `task` in one statement (no transaction around it: one
    /// round trip where BEGIN, a pick, a write and COMMIT took four). Waiting runs and lapsed
    /// ones each walk their own index in the queue's order, locking as they go (SKIP LOCKED
    /// passes what another agent is claiming), and stop at the room, so that a claim's cost does
    /// not grow with the backlog. At most 2 × room rows are locked; those not taken are let go
    /// at the statement's end. A waiting run held for another agent than `holder` (its
    /// assignment's hold not over) is passed, not locked, and so is a run requiring labels that
    /// no executor of the holder taking the task carries. The claim writes columns only — the
    /// record in `data` is not rewritten (`claims` and `started`, migration 7, say what it lacks;
    /// see ``PostgresRunStore/overlay(_:claims:started:holder:)``) — so each claimed run is
    /// written once.
    struct Claim: PostgresPreparedStatement {
        static let name = "agent_claim_5"
        static let sql = """
            WITH clock AS (SELECT \(PostgresMigrations.now) AS t),
            waiting AS (
                SELECT id, priority, due, seq FROM task_runs
                WHERE task = $1 AND status IN ('queued', 'retrying') AND due <= (SELECT t FROM clock)
                AND (assigned_until IS NULL OR assigned_until <= (SELECT t FROM clock) OR assigned_to = $3)
                AND (require IS NULL OR require <@ ANY($5::text[]::jsonb[])) AND NOT (id = ANY($6::text[]))
                ORDER BY priority DESC, due, seq LIMIT $2 FOR UPDATE SKIP LOCKED),
            lapsed AS (
                SELECT id, priority, due, seq FROM task_runs
                WHERE task = $1 AND status = 'running' AND lease_until < (SELECT t FROM clock)
                AND (require IS NULL OR require <@ ANY($5::text[]::jsonb[])) AND NOT (id = ANY($6::text[]))
                ORDER BY priority DESC, due, seq LIMIT $2 FOR UPDATE SKIP LOCKED),
            picked AS (
                SELECT id FROM (SELECT * FROM waiting UNION ALL SELECT * FROM lapsed) c
                ORDER BY c.priority DESC, c.due, c.seq LIMIT $2)
            UPDATE task_runs t SET status = 'running', holder = $3, fence = nextval('run_fence'), lease_until = clock.t + $4,
                claims = t.claims + 1, started = clock.t
            FROM picked, clock WHERE t.id = picked.id
            RETURNING t.id, t.data, t.claims, t.fence, t.lease_until, clock.t, t.priority, t.due, t.seq
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .int8, .text, .float8, .textArray, .textArray]
        typealias Row = (id: String, data: String, claims: Int32, fence: Int64, leaseUntil: Double, now: Double,
                         priority: Int16, due: Double, seq: Int64)

        var task: String
        var room: Int
        var holder: String
        var lease: Double
        /// The label sets (JSON objects) of the holder's executors taking the task: a run that
        /// requires labels is passed unless one of them carries them all.
        var labels: [String]
        /// Runs not to claim (see ``ClaimRequest/excluding``).
        var excluding: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 6)
            bindings.append(task)
            bindings.append(room)
            bindings.append(holder)
            bindings.append(lease)
            bindings.append(labels)
            bindings.append(excluding)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row {
            let (id, data, claims, fence, leaseUntil, now, priority, due, seq) =
                try row.decode((String, String, Int32, Int64, Double, Double, Int16, Double, Int64).self)
            return (id, data, claims, fence, leaseUntil, now, priority, due, seq)
        }
    }

    /// A batch of claimed runs' changes, each written only while its claim holds the run (see
    /// ``writeClaimed(_:on:logger:)``); returns the ids written. `ended`: NaN stands for none.
    /// A claimed run's hold for its assigned agent is spent: a retry goes to any agent.
    /// The runs' attempts' records ($12…$17, see ``AttemptColumns``) are written in the same
    /// statement, for the runs written only (a stale claim's attempt is refused with its run).
    struct ClaimedBatchWrite: PostgresPreparedStatement {
        static let name = "agent_claimed_write_6"
        static let sql = """
            WITH written AS (
                UPDATE task_runs t SET status = c.status, finished = c.finished, priority = c.priority, due = c.due,
                    ended = NULLIF(c.ended, 'NaN'::float8), data = c.data, listed = NULLIF(c.listed, ''), listed_for = c.listed_for,
                    holder = CASE WHEN c.status = 'running' THEN t.holder ELSE NULL END,
                    lease_until = CASE WHEN c.status = 'running' THEN t.lease_until ELSE NULL END, assigned_until = NULL, claims = 0
                FROM unnest($1::text[], $2::text[], $3::boolean[], $4::int2[], $5::float8[], $6::float8[], $7::text[], $8::text[], $9::bigint[],
                            $10::text[], $11::bigint[])
                    AS c(id, status, finished, priority, due, ended, data, holder, fence, listed, listed_for)
                WHERE t.id = c.id AND t.holder = c.holder AND t.fence = c.fence
                RETURNING t.id),
            attempts AS (
                \(PostgresRunStore.attemptsInsert(from: 12, where: "a.run_id IN (SELECT id FROM written)")))
            SELECT id FROM written
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray, .boolArray, .int2Array, .float8Array, .float8Array,
                                                           .textArray, .textArray, .int8Array, .textArray, .int8Array] + AttemptColumns.types
        typealias Row = String

        var columns: Columns
        var holders: [String]
        var fences: [Int64]
        var attempts: AttemptColumns

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 17)
            bindings.append(columns.ids)
            bindings.append(columns.statuses)
            bindings.append(columns.finished)
            bindings.append(columns.priorities)
            bindings.append(columns.dues)
            bindings.append(columns.ended)
            bindings.append(columns.records)
            bindings.append(holders)
            bindings.append(fences)
            bindings.append(columns.listed)
            bindings.append(columns.listedFor)
            attempts.bind(&bindings)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
    }
}
#endif
