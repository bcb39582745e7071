import PostgresNIO

/// The queue's hot statements, prepared once per connection (postgres-nio keeps them by name):
/// a claim and a result batch then cost the server no parsing nor, after its first few
/// executions, planning — which took as long as executing them (issue 26's figure 13).
extension PostgresRunStore {
    /// Picks up to `room` runs of `task`: waiting runs and lapsed ones each walk their own
    /// index in the queue's order, locking as they go (SKIP LOCKED passes what another agent
    /// is claiming), and stop at the room, so that a claim's cost does not grow with the
    /// backlog (one pick with an OR read and sorted every waiting run). At most 2 × room rows
    /// are locked; those not taken are let go at the commit. A waiting run held for another
    /// agent than `holder` (its assignment's hold not over) is passed, not locked.
    struct ClaimPick: PostgresPreparedStatement {
        static let name = "agent_claim_pick_2"
        static let sql = """
            WITH clock AS (SELECT \(PostgresMigrations.now) AS t),
            waiting AS (
                SELECT id, priority, due, seq, data FROM task_runs
                WHERE task = $1 AND status IN ('queued', 'retrying') AND due <= (SELECT t FROM clock)
                AND (assigned_until IS NULL OR assigned_until <= (SELECT t FROM clock) OR assigned_to = $3)
                ORDER BY priority DESC, due, seq LIMIT $2 FOR UPDATE SKIP LOCKED),
            lapsed AS (
                SELECT id, priority, due, seq, data FROM task_runs
                WHERE task = $1 AND status = 'running' AND lease_until < (SELECT t FROM clock)
                ORDER BY priority DESC, due, seq LIMIT $2 FOR UPDATE SKIP LOCKED)
            SELECT c.id, c.data, clock.t FROM (SELECT * FROM waiting UNION ALL SELECT * FROM lapsed) c, clock
            ORDER BY c.priority DESC, c.due, c.seq LIMIT $2
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .int8, .text]
        typealias Row = (String, String, Double)

        var task: String
        var room: Int
        var holder: String

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 3)
            bindings.append(task)
            bindings.append(room)
            bindings.append(holder)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// Writes the picked runs' claim and record in one statement (an empty record: the row's
    /// own, for a record that could not be read). Returns each run's fence and lease.
    struct ClaimWrite: PostgresPreparedStatement {
        static let name = "agent_claim_write_1"
        static let sql = """
            UPDATE task_runs t SET status = 'running', holder = $1, fence = nextval('run_fence'),
                lease_until = \(PostgresMigrations.now) + $2, data = CASE WHEN c.data = '' THEN t.data ELSE c.data END
            FROM unnest($3::text[], $4::text[]) AS c(id, data) WHERE t.id = c.id
            RETURNING t.id, t.fence, t.lease_until
            """
        static let bindingDataTypes: [PostgresDataType] = [.text, .float8, .textArray, .textArray]
        typealias Row = (String, Int64, Double)

        var holder: String
        var lease: Double
        var ids: [String]
        var records: [String]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 4)
            bindings.append(holder)
            bindings.append(lease)
            bindings.append(ids)
            bindings.append(records)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
    }

    /// A batch of claimed runs' changes, each written only while its claim holds the run (see
    /// ``writeClaimed(_:on:logger:)``); returns the ids written. `ended`: NaN stands for none.
    /// A claimed run's hold for its assigned agent is spent: a retry goes to any agent.
    struct ClaimedBatchWrite: PostgresPreparedStatement {
        static let name = "agent_claimed_write_2"
        static let sql = """
            UPDATE task_runs t SET status = c.status, finished = c.finished, priority = c.priority, due = c.due,
                ended = NULLIF(c.ended, 'NaN'::float8), data = c.data,
                holder = CASE WHEN c.status = 'running' THEN t.holder ELSE NULL END,
                lease_until = CASE WHEN c.status = 'running' THEN t.lease_until ELSE NULL END, assigned_until = NULL
            FROM unnest($1::text[], $2::text[], $3::boolean[], $4::int2[], $5::float8[], $6::float8[], $7::text[], $8::text[], $9::bigint[])
                AS c(id, status, finished, priority, due, ended, data, holder, fence)
            WHERE t.id = c.id AND t.holder = c.holder AND t.fence = c.fence
            RETURNING t.id
            """
        static let bindingDataTypes: [PostgresDataType] = [.textArray, .textArray, .boolArray, .int2Array, .float8Array, .float8Array,
                                                           .textArray, .textArray, .int8Array]
        typealias Row = String

        var columns: Columns
        var holders: [String]
        var fences: [Int64]

        func makeBindings() throws -> PostgresBindings {
            var bindings = PostgresBindings(capacity: 9)
            bindings.append(columns.ids)
            bindings.append(columns.statuses)
            bindings.append(columns.finished)
            bindings.append(columns.priorities)
            bindings.append(columns.dues)
            bindings.append(columns.ended)
            bindings.append(columns.records)
            bindings.append(holders)
            bindings.append(fences)
            return bindings
        }

        func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(String.self) }
    }
}
