import GRDB

/// The store's tables. Migrations run in order and are recorded, so that a newer runtime
/// upgrades an older agent's database in place.
package enum StoreSchema {
    package static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            // time: seconds since the Unix epoch (UTC), so that queries can say `time >= :since`.
            try db.execute(sql: """
                CREATE TABLE events (
                    id INTEGER PRIMARY KEY,
                    time REAL NOT NULL,
                    type TEXT NOT NULL,
                    source TEXT NOT NULL,
                    payload TEXT NOT NULL
                );
                CREATE INDEX events_type_time ON events(type, time);
                CREATE INDEX events_time ON events(time);
                CREATE TABLE state (
                    process TEXT PRIMARY KEY,
                    data BLOB NOT NULL,
                    updated REAL NOT NULL
                );
                CREATE TABLE history (
                    id INTEGER PRIMARY KEY,
                    time REAL NOT NULL,
                    process TEXT NOT NULL,
                    event TEXT NOT NULL,
                    detail TEXT NOT NULL DEFAULT '',
                    pid INTEGER,
                    exit_code INTEGER,
                    signal TEXT
                );
                CREATE INDEX history_process_time ON history(process, time);
                """)
        }
        migrator.registerMigration("v2-chat") { db in
            try db.execute(sql: """
                CREATE TABLE chat (
                    id INTEGER PRIMARY KEY,
                    time REAL NOT NULL,
                    conversation TEXT NOT NULL,
                    role TEXT NOT NULL,
                    source TEXT NOT NULL DEFAULT '',
                    text TEXT NOT NULL
                );
                CREATE INDEX chat_conversation ON chat(conversation, id);
                """)
        }
        migrator.registerMigration("v3-task-runs") { db in
            // One row per run, replaced at every change; `data` is the whole record (JSON), the
            // other columns what lists filter and order by. `row` keeps the order of arrival.
            try db.execute(sql: """
                CREATE TABLE task_runs (
                    row INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    task TEXT NOT NULL,
                    status TEXT NOT NULL,
                    finished INTEGER NOT NULL,
                    ended REAL,
                    data TEXT NOT NULL
                );
                CREATE INDEX task_runs_task ON task_runs(task, row);
                CREATE INDEX task_runs_status ON task_runs(status, row);
                CREATE INDEX task_runs_finished ON task_runs(finished, row);
                """)
        }
        migrator.registerMigration("v4-schedules") { db in
            // A schedule's state (JSON: through, next, paused, last fire…) replaced at every
            // change, and its history, one row per fire or group of missed/skipped times.
            try db.execute(sql: """
                CREATE TABLE schedules (
                    name TEXT PRIMARY KEY,
                    data TEXT NOT NULL,
                    updated REAL NOT NULL
                );
                CREATE TABLE schedule_history (
                    row INTEGER PRIMARY KEY,
                    schedule TEXT NOT NULL,
                    planned REAL,
                    actual REAL NOT NULL,
                    outcome TEXT NOT NULL,
                    run_id TEXT,
                    data TEXT NOT NULL
                );
                CREATE INDEX schedule_history_schedule ON schedule_history(schedule, row);
                """)
        }
        migrator.registerMigration("v5-idempotency") { db in
            // A run's idempotency key (its id unless a workflow step gave one), so that a step
            // run again after a crash can be found by the key it ran with.
            try db.execute(sql: """
                ALTER TABLE task_runs ADD COLUMN idempotency_key TEXT;
                UPDATE task_runs SET idempotency_key = id;
                CREATE INDEX task_runs_idempotency_key ON task_runs(idempotency_key);
                """)
        }
        migrator.registerMigration("v5-memory") { db in
            // Shared memory: a JSON value per (scope, key) with its version (compare-and-set).
            // scope: "agent" or "run:<workflow run id>".
            try db.execute(sql: """
                CREATE TABLE memory (
                    scope TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value TEXT NOT NULL,
                    version INTEGER NOT NULL,
                    updated REAL NOT NULL,
                    PRIMARY KEY (scope, key)
                ) WITHOUT ROWID;
                """)
        }
        migrator.registerMigration("v5-assignment") { db in
            // Choices made at run time that outlive the agent: strategies, drained executors.
            try db.execute(sql: "CREATE TABLE assignment (key TEXT PRIMARY KEY, value TEXT NOT NULL)")
        }
        migrator.registerMigration("v5-workflows") { db in
            // A workflow run (JSON: input, variables, status, its copy of the definition…)
            // replaced at every change, and its step log: one row per step and generation
            // (a goto revisits a step in a new generation), replaced as the step goes on.
            try db.execute(sql: """
                CREATE TABLE workflow_runs (
                    row INTEGER PRIMARY KEY,
                    id TEXT NOT NULL UNIQUE,
                    workflow TEXT NOT NULL,
                    status TEXT NOT NULL,
                    finished INTEGER NOT NULL,
                    ended REAL,
                    data TEXT NOT NULL
                );
                CREATE INDEX workflow_runs_workflow ON workflow_runs(workflow, row);
                CREATE INDEX workflow_runs_finished ON workflow_runs(finished, row);
                CREATE TABLE workflow_steps (
                    row INTEGER PRIMARY KEY,
                    run_id TEXT NOT NULL,
                    step TEXT NOT NULL,
                    generation INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    data TEXT NOT NULL,
                    UNIQUE (run_id, step, generation)
                );
                CREATE INDEX workflow_steps_run ON workflow_steps(run_id, row);
                """)
        }
        migrator.registerMigration("v6-claims") { db in
            // Claims of a shared queue (RunStore.claim): who holds a running run, the claim's
            // fencing token and when its lease lapses (all NULL for runs an agent owns itself).
            // One counter orders every claim; `leases` holds named leases (the scheduler's leader).
            try db.execute(sql: """
                ALTER TABLE task_runs ADD COLUMN holder TEXT;
                ALTER TABLE task_runs ADD COLUMN fence INTEGER;
                ALTER TABLE task_runs ADD COLUMN lease_until REAL;
                CREATE TABLE claim_fence (id INTEGER PRIMARY KEY CHECK (id = 1), value INTEGER NOT NULL);
                INSERT INTO claim_fence (id, value) VALUES (1, 0);
                CREATE TABLE leases (
                    name TEXT PRIMARY KEY,
                    holder TEXT NOT NULL,
                    fence INTEGER NOT NULL,
                    expires REAL NOT NULL
                );
                """)
        }
        migrator.registerMigration("v7-task-attempts") { db in
            // Every attempt of a task run, a record of its own, replaced as it goes on (`data`:
            // JSON without the tails, which have columns of their own so that old attempts'
            // tails can be let go). Deleted with their run. A run written before this table has
            // none: its last attempt is shown from its record.
            try db.execute(sql: """
                CREATE TABLE task_attempts (
                    row INTEGER PRIMARY KEY,
                    run_id TEXT NOT NULL,
                    attempt INTEGER NOT NULL,
                    status TEXT NOT NULL,
                    data TEXT NOT NULL,
                    stderr_tail TEXT,
                    stdout_tail TEXT,
                    UNIQUE (run_id, attempt)
                );
                """)
        }
        migrator.registerMigration("v7-event-runs") { db in
            // The run an event is about (its payload's top-level `run_id`: the task and workflow
            // events), for `events --run`; indexed only where there is one. Events stored before
            // get theirs from their payload now (CASE: an invalid payload is never parsed).
            // No index on `source`: one more B-tree insert per event cost the writer ~50% per
            // event (agent-bench figure 5, quick, debug), and a source's newest events are
            // found walking the ids back, stopping at the limit.
            try db.execute(sql: """
                ALTER TABLE events ADD COLUMN run_id TEXT;
                UPDATE events SET run_id = CASE WHEN json_valid(payload) THEN
                        CASE WHEN json_type(payload, '$.run_id') = 'text' THEN json_extract(payload, '$.run_id') END END
                    WHERE instr(payload, '"run_id"') > 0;
                CREATE INDEX events_run ON events(run_id, id) WHERE run_id IS NOT NULL;
                """)
        }
        migrator.registerMigration("v7-chat-voice") { db in
            // A voice message's transcript keeps how sure the recogniser was (NULL for typed lines).
            try db.execute(sql: "ALTER TABLE chat ADD COLUMN confidence REAL")
        }
        migrator.registerMigration("v8-chat-users") { db in
            // Who each line is for (a person's message and the bot's answer to it; NULL for an
            // alert, and for lines written before): history is listed and cleared per user.
            // Preferences per user: one JSON object each.
            try db.execute(sql: """
                ALTER TABLE chat ADD COLUMN user TEXT;
                CREATE INDEX chat_user ON chat(user, id) WHERE user IS NOT NULL;
                CREATE TABLE chat_preferences (
                    user TEXT PRIMARY KEY,
                    time REAL NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v9-events-time") { db in
            // The index on (time) alone goes: it cost the writer ~0.2 µs per event of ~1.1 (agent-bench
            // figure 5, each index alone on the floor; benchmarks/HISTORY.md, stop 51). A query on time
            // alone is served by (type, time) with a skip-scan, one seek per type, which the planner
            // takes when sqlite_stat1 says a type has many rows: that index's row, as ANALYZE writes it
            // (100,000 events, 1,000 a type; the other plans are the same as without it). A later
            // ANALYZE replaces it with the real figures, which say as much for an event log.
            try db.execute(sql: """
                DROP INDEX IF EXISTS events_time;
                ANALYZE sqlite_master;
                DELETE FROM sqlite_stat1 WHERE tbl = 'events';
                INSERT INTO sqlite_stat1 (tbl, idx, stat) VALUES ('events', 'events_type_time', '\(eventTypeTimeStatistics)');
                """)
        }
        migrator.registerMigration("v10-run-journal") { db in
            // The highest sequence number of a new run in the run journal (RunJournal) that the
            // store has written: a line at or below it is never written again at an open.
            try db.execute(sql: """
                CREATE TABLE run_journal (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);
                INSERT INTO run_journal (id, seq) VALUES (1, 0);
                """)
        }
        migrator.registerMigration("v11-listed-runs") { db in
            // A run's record for lists (RunListing): without its long members, NULL when it has
            // none. A list of 100 runs of a MiB each read and parsed 100 MiB. Runs written
            // before have none: their lists read the record. A list takes it only while it is
            // the current record's (SQLiteRunStore.listedRecord): a runtime from before this
            // migration rewrites a record without it. (Triggers that dropped a stale one at
            // each write cost the writer 40 % of figure 10's persisted runs a second.)
            try db.execute(sql: """
                ALTER TABLE task_runs ADD COLUMN listed TEXT;
                ALTER TABLE workflow_runs ADD COLUMN listed TEXT;
                """)
        }
        return migrator
    }

    /// sqlite_stat1's row for `events_type_time` (rows, rows per type, rows per type and time):
    /// what lets the planner serve `time >= ?` alone by a skip-scan of it.
    package static let eventTypeTimeStatistics = "100000 1000 1"

    /// An empty in-memory database with the schema, to check monitors' queries before start
    /// (made once: checking a thousand processes must not run the migrations a thousand times).
    package static func scratchDatabase() throws -> DatabaseQueue {
        switch scratch {
        case .success(let queue): return queue
        case .failure(let error): throw error
        }
    }

    private static let scratch: Result<DatabaseQueue, any Error> = Result {
        let queue = try DatabaseQueue()
        try migrator.migrate(queue)
        return queue
    }
}
