#if Fleet
import Logging
import PostgresNIO

/// The fleet's tables in PostgreSQL. Migrations are numbered, applied in order in one
/// transaction, and recorded in `agent_migrations`; an advisory lock makes agents that start
/// together apply each once. A database newer than this runtime is refused.
enum PostgresMigrations {
    struct Migration {
        var version: Int
        var name: String
        var sql: [String]
    }

    /// Every instant the fleet compares (due times, leases, heartbeats) is the server's clock,
    /// so that hosts' clocks need not agree.
    static let now = "extract(epoch from clock_timestamp())::float8"

    static let all: [Migration] = [
        Migration(version: 1, name: "runs", sql: [
            // One row per run; `data` is the whole record (JSON), the other columns what claims
            // order and filter by. `seq`: the order of arrival. `fence`: from one sequence, so
            // that every claim's token is higher than any before it.
            "CREATE SEQUENCE run_fence",
            """
            CREATE TABLE task_runs (
                seq bigserial NOT NULL,
                id text PRIMARY KEY,
                task text NOT NULL,
                status text NOT NULL,
                finished boolean NOT NULL,
                priority smallint NOT NULL,
                due double precision NOT NULL,
                ended double precision,
                holder text,
                fence bigint,
                lease_until double precision,
                data text NOT NULL
            )
            """,
            "CREATE INDEX task_runs_claim ON task_runs (task, priority DESC, due, seq) WHERE status IN ('queued', 'retrying')",
            "CREATE INDEX task_runs_leases ON task_runs (task, lease_until) WHERE status = 'running'",
            "CREATE INDEX task_runs_seq ON task_runs (seq)",
            "CREATE INDEX task_runs_finished ON task_runs (finished, seq)",
            // A wakeup for the agents waiting for work (LISTEN agent_runs): a hint only, they poll too.
            """
            CREATE FUNCTION task_runs_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('agent_runs', NEW.task); RETURN NULL; END $$
            """,
            "CREATE TRIGGER task_runs_inserted AFTER INSERT ON task_runs FOR EACH ROW EXECUTE FUNCTION task_runs_notify()",
        ]),
        Migration(version: 2, name: "schedules", sql: [
            "CREATE TABLE schedules (name text PRIMARY KEY, data text NOT NULL, updated double precision NOT NULL)",
            """
            CREATE TABLE schedule_history (
                row bigserial PRIMARY KEY,
                schedule text NOT NULL,
                planned double precision,
                actual double precision NOT NULL,
                outcome text NOT NULL,
                run_id text,
                data text NOT NULL
            )
            """,
            "CREATE INDEX schedule_history_schedule ON schedule_history (schedule, row)",
            "CREATE TABLE leases (name text PRIMARY KEY, holder text NOT NULL, fence bigint NOT NULL, expires double precision NOT NULL)",
        ]),
        Migration(version: 3, name: "members", sql: [
            """
            CREATE TABLE fleet_agents (
                agent_id text PRIMARY KEY,
                host text NOT NULL,
                version text NOT NULL,
                started double precision NOT NULL,
                heartbeat double precision NOT NULL,
                data text NOT NULL
            )
            """,
        ]),
        Migration(version: 4, name: "events", sql: [
            // Published events (issue 26 item 4). `seq` is the fleet's order: writers insert
            // under one advisory lock, so that seq order is commit order and a reader that saw
            // seq N never finds a smaller one committed later. `time`: when the source emitted
            // it (ns, its host's clock); `published`: the server's clock, for the retention.
            """
            CREATE TABLE fleet_events (
                seq bigserial PRIMARY KEY,
                agent_id text NOT NULL,
                source text NOT NULL,
                type text NOT NULL,
                time bigint NOT NULL,
                published double precision NOT NULL,
                payload text NOT NULL
            )
            """,
            "CREATE INDEX fleet_events_type ON fleet_events (type, seq)",
            "CREATE INDEX fleet_events_published ON fleet_events (agent_id, published)",
            // How far each subscribing agent got.
            "CREATE TABLE fleet_event_cursors (agent_id text PRIMARY KEY, seq bigint NOT NULL, updated double precision NOT NULL)",
            """
            CREATE FUNCTION fleet_events_notify() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN PERFORM pg_notify('agent_events', ''); RETURN NULL; END $$
            """,
            "CREATE TRIGGER fleet_events_inserted AFTER INSERT ON fleet_events FOR EACH STATEMENT EXECUTE FUNCTION fleet_events_notify()",
        ]),
        Migration(version: 5, name: "workflows", sql: [
            // One row per workflow run (`data`: the whole record), held by one agent at a time:
            // `holder`, `fence` (from run_fence, as the task runs' claims) and `lease_until`.
            // The step log: one row per step and generation, in the order the steps started (`row`).
            """
            CREATE TABLE workflow_runs (
                seq bigserial NOT NULL,
                id text PRIMARY KEY,
                workflow text NOT NULL,
                status text NOT NULL,
                finished boolean NOT NULL,
                ended double precision,
                holder text,
                fence bigint,
                lease_until double precision,
                data text NOT NULL
            )
            """,
            "CREATE INDEX workflow_runs_seq ON workflow_runs (seq)",
            "CREATE INDEX workflow_runs_held ON workflow_runs (lease_until) WHERE NOT finished",
            "CREATE INDEX workflow_runs_workflow ON workflow_runs (workflow, seq)",
            """
            CREATE TABLE workflow_steps (
                row bigserial PRIMARY KEY,
                run_id text NOT NULL,
                step text NOT NULL,
                generation integer NOT NULL,
                status text NOT NULL,
                data text NOT NULL,
                UNIQUE (run_id, step, generation)
            )
            """,
        ]),
        Migration(version: 6, name: "assignments", sql: [
            // The agent a strategy chose for a queued run, and until when the run waits for it
            // alone (the submitting host's clock, as `due`); NULL: any agent.
            "ALTER TABLE task_runs ADD COLUMN assigned_to text, ADD COLUMN assigned_until double precision",
            """
            CREATE INDEX task_runs_holds ON task_runs (task, assigned_until)
            WHERE status IN ('queued', 'retrying') AND assigned_until IS NOT NULL
            """,
        ]),
        Migration(version: 7, name: "claims", sql: [
            // A claim writes columns only, in the statement that picks the runs: `claims` counts
            // the claims since `data` was last written (the record's attempt plus this is the
            // run's), `started` the last one's instant. Readers lay them over the record;
            // every write of the record sets `claims` back to 0.
            "ALTER TABLE task_runs ADD COLUMN claims integer NOT NULL DEFAULT 0, ADD COLUMN started double precision",
        ]),
        Migration(version: 8, name: "memory", sql: [
            // Shared memory (as the agent's SQLite store has it): keys in byte order ("C"), so
            // that lists page the same way on both stores.
            """
            CREATE TABLE memory (
                scope text NOT NULL,
                key text COLLATE "C" NOT NULL,
                value text NOT NULL,
                version integer NOT NULL,
                updated double precision NOT NULL,
                PRIMARY KEY (scope, key)
            )
            """,
        ]),
        Migration(version: 9, name: "requirements", sql: [
            // The labels a run requires of its executor (NULL: none), for claims to pass runs
            // no executor of the claiming agent carries.
            "ALTER TABLE task_runs ADD COLUMN require jsonb",
        ]),
        Migration(version: 10, name: "attempts", sql: [
            // Every attempt of a task run, a record of its own (as the agent's SQLite store
            // keeps them): `data` without the tails, which have columns of their own so that
            // old attempts' tails can be let go. Written with their run's change (only while the
            // writer's claim holds it); deleted with their run.
            """
            CREATE TABLE task_attempts (
                run_id text NOT NULL,
                attempt integer NOT NULL,
                status text NOT NULL,
                data text NOT NULL,
                stderr_tail text,
                stdout_tail text,
                PRIMARY KEY (run_id, attempt)
            )
            """,
        ]),
        Migration(version: 11, name: "listed", sql: [
            // A run's record for lists (RunListing.listed: the record without its members over
            // 8 KiB, naming them), written with the record when it has such a member, and the
            // length in bytes of the record it was made for (`listed_for`, written with every
            // record): a list reads the record for lists (or the record, when it has none) while
            // that length is the record's, which the server knows without reading the record.
            // Otherwise (a row written before, or rewritten by an agent of an older version) the
            // server leaves the long members out itself (PostgresListing).
            "ALTER TABLE task_runs ADD COLUMN listed text, ADD COLUMN listed_for bigint",
            "ALTER TABLE workflow_runs ADD COLUMN listed text, ADD COLUMN listed_for bigint",
            // A record's members as a list shows them: the record without those longer than
            // `over` bytes, and their names (NULL when none). NULLs for a record it cannot split:
            // one PostgreSQL cannot read (a \u0000, which it refuses to unescape) or no JSON
            // object; the agent reads such a record whole.
            """
            CREATE FUNCTION agent_listed_members(record text, over integer, OUT kept text, OUT omitted text[])
            LANGUAGE plpgsql IMMUTABLE AS $$
            BEGIN
                SELECT coalesce(json_object_agg(key, value) FILTER (WHERE octet_length(value::text) <= over), '{}'::json)::text,
                    array_agg(key ORDER BY key) FILTER (WHERE octet_length(value::text) > over)
                INTO kept, omitted FROM json_each(record::json);
            EXCEPTION WHEN others THEN
                kept := NULL;
                omitted := NULL;
            END
            $$
            """,
        ]),
    ]

    struct TooNew: Error, CustomStringConvertible {
        var found: Int
        var known: Int
        var description: String {
            "the fleet's database is at schema version \(found), newer than this runtime knows (\(known)): upgrade agent-control on this host"
        }
    }

    /// Applies what is missing; returns the versions applied now.
    @discardableResult
    static func migrate(_ client: PostgresClient, logger: Logger) async throws -> [Int] {
        try await client.withTransaction(logger: logger) { connection in
            // One agent at a time (released at the end of the transaction).
            try await connection.query("SELECT pg_advisory_xact_lock(2026112601)", logger: logger)
            try await connection.query("""
                CREATE TABLE IF NOT EXISTS agent_migrations (
                    version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())
                """, logger: logger)
            var applied = Set<Int>()
            for try await version in try await connection.query("SELECT version FROM agent_migrations", logger: logger).decode(Int.self) {
                applied.insert(version)
            }
            let known = all.map(\.version).max() ?? 0
            if let newest = applied.max(), newest > known { throw TooNew(found: newest, known: known) }
            var done: [Int] = []
            for migration in all where !applied.contains(migration.version) {
                for statement in migration.sql {
                    try await connection.query(PostgresQuery(unsafeSQL: statement), logger: logger)
                }
                try await connection.query("INSERT INTO agent_migrations (version, name) VALUES (\(migration.version), \(migration.name))", logger: logger)
                done.append(migration.version)
            }
            return done
        }
    }
}
#endif
