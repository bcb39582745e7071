import AgentStore
import AgentTestSupport
import AgentWork
import Foundation
import GRDB
import Testing

/// Whole run records on the agent's SQLite file (issue 36 item 4): a store written before runs
/// kept their attempts opens, keeps its runs and shows each one's last attempt from its record;
/// `events` filters by source, run and type in the store's query, with an index.
@Suite(.ownThreads) struct RunRecordsUpgradeTests {
    static let tasks = #"""
        "ok": {"type": "command", "command": ["/bin/echo", "fine"]},
        "three": {"type": "command", "command": "echo 'no luck' >&2; exit 3", "shell": true,
                  "retries": {"max": 2, "initial_delay": 0.1, "multiplier": 1, "max_delay": 1}}
        """#

    static func json(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
    }

    static func lines(_ text: String) -> [[String: Any]] {
        text.split(separator: "\n").map { json(String($0)) }
    }

    /// A store as the runtime before attempts left it (migrations up to v6-claims), with one
    /// finished run that took two attempts and events about it.
    static func oldStore(in directory: String) throws {
        try FileManager.default.createDirectory(atPath: directory + "/.agent/data", withIntermediateDirectories: true)
        let queue = try DatabaseQueue(path: directory + "/.agent/data/agent.sqlite")
        try StoreSchema.migrator.migrate(queue, upTo: "v6-claims")
        // An hour ago: within the store's retention (a week by default), which prunes at the start.
        let then = Date().timeIntervalSince1970 - 3_600
        var run = TaskRun(id: "old-1", task: "three", requestedBy: .cli, queuedAt: then)
        run.status = .failed
        run.attempt = 2
        run.startedAt = then + 10
        run.endedAt = then + 11
        run.error = "exited with status 3; last line of stderr: old trouble"
        run.exitCode = 3
        run.stderrTail = "old trouble"
        try queue.write { db in
            // As the runtime of then wrote it (no record for lists).
            try db.execute(sql: "INSERT INTO task_runs (id, task, status, finished, ended, data, idempotency_key) VALUES (?, ?, ?, 1, ?, ?, ?)",
                           arguments: [run.id, run.task, run.status.rawValue, run.endedAt, run.storedJSON.serialized(), run.id])
            for (type, payload) in [("task.retrying", #"{"run_id": "old-1", "attempt": 1}"#), ("task.failed", #"{"run_id": "old-1", "attempt": 2}"#),
                                    ("task.failed", #"{"run_id": "other", "attempt": 1}"#), ("odd", #"{"run_id": broken"#)] {
                try db.execute(sql: "INSERT INTO events (time, type, source, payload) VALUES (?, ?, 'tasks', ?)",
                               arguments: [then + 11, type, payload])
            }
        }
    }

    @Test func aStoreFromBeforeAttemptsOpensAndItsRunsShowTheirLastAttemptFromTheirRecord() throws {
        let directory = TestPaths.temporaryDirectory("old-store")
        try Self.oldStore(in: directory)
        let (agent, _) = try TaskAgent.agent(tasks: Self.tasks, directory: directory)
        defer {
            _ = agent.stop()
            try? FileManager.default.removeItem(atPath: directory)
        }
        let listed = try TaskAgent.control(agent, ["runs", "--json"])
        #expect(listed.stdout.contains(#""id":"old-1""#), "the old run is kept: \(listed.stdout)\(listed.stderr)\n\(agent.transcript)")
        let shown = try TaskAgent.control(agent, ["show", "old-1", "--json"])
        #expect(shown.status == 0, "\(shown.stderr)")
        let run = Self.json(shown.stdout)
        #expect(run["status"] as? String == "failed")
        let attempts = run["attempts"] as? [[String: Any]] ?? []
        #expect(attempts.count == 1, "one attempt, made from the run's record: \(shown.stdout)")
        #expect(attempts.first?["attempt"] as? Int == 2)
        #expect(attempts.first?["status"] as? String == "failed")
        #expect(attempts.first?["from_run_record"] as? Bool == true)
        #expect(attempts.first?["exit_code"] as? Int == 3)
        #expect(attempts.first?["stderr_tail"] as? String == "old trouble")
        #expect(attempts.first?["error"] as? String == "exited with status 3; last line of stderr: old trouble")
        #expect(run["attempts_not_kept"] as? Int == 1, "the first attempt left no record")
        let human = try TaskAgent.control(agent, ["show", "old-1"]).stdout
        #expect(human.contains("attempts: 1 (1 more not kept)") && human.contains("(from the run's record)"), "\(human)")

        // The events stored before: found by their run (the migration read their payloads).
        let old = Self.lines(try runProgram("agent-control", ["events", "--run", "old-1", "--json", "--settings", agent.settingsFile]).stdout)
        #expect(old.map { $0["type"] as? String } == ["task.retrying", "task.failed"], "\(old)")

        // New runs keep every attempt in the upgraded store.
        let failed = try TaskAgent.control(agent, ["run", "three", "--wait", "--json"])
        let id = try #require(Self.json(failed.stdout)["id"] as? String, "\(failed.stdout)")
        let fresh = Self.json(try TaskAgent.control(agent, ["show", id, "--json"]).stdout)
        let freshAttempts = fresh["attempts"] as? [[String: Any]] ?? []
        #expect(freshAttempts.map { $0["attempt"] as? Int } == [1, 2, 3], "\(fresh)")
        #expect(freshAttempts.allSatisfy { $0["from_run_record"] == nil && $0["stderr_tail"] as? String == "no luck" }, "\(fresh)")
    }

    @Test func eventsAreFilteredBySourceRunAndTypeInTheStoresQuery() throws {
        let processes = #"{"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.05}}"#
        let (agent, port) = try TaskAgent.agent(tasks: Self.tasks, modules: #"["sample"]"#, processes: processes)
        defer { _ = agent.stop() }
        func events(_ arguments: [String]) throws -> [[String: Any]] {
            let result = try runProgram("agent-control", ["events", "--json", "--limit", "1000"] + arguments + ["--settings", agent.settingsFile])
            #expect(result.status == 0, "\(result.stderr)")
            return Self.lines(result.stdout)
        }
        let failed = try #require(Self.json(try TaskAgent.control(agent, ["run", "three", "--wait", "--json"]).stdout)["id"] as? String)
        let succeeded = try #require(Self.json(try TaskAgent.control(agent, ["run", "ok", "--wait", "--json"]).stdout)["id"] as? String)
        // Written by the store's writer a moment after the runs end.
        let deadline = Date().addingTimeInterval(60)
        while try events(["--run", succeeded, "--type", "task.succeeded"]).isEmpty || events(["--run", failed, "--type", "task.failed"]).isEmpty,
              Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
        }
        let ofFailed = try events(["--run", failed])
        #expect(Set(ofFailed.map { $0["type"] as? String ?? "" }) == ["task.queued", "task.started", "task.retrying", "task.failed"], "\(ofFailed)")
        #expect(ofFailed.allSatisfy { ($0["payload"] as? [String: Any])?["run_id"] as? String == failed }, "\(ofFailed)")
        #expect(try events(["--run", failed, "--type", "task.retrying"]).count == 2)
        #expect(try events(["--source", "tasks", "--run", succeeded, "--type", "task.succeeded"]).count == 1)
        #expect(try events(["--run", failed, "--run", succeeded, "--type", "task.started"]).count == 4, "three attempts and one")
        let trades = try events(["--source", "trades", "--limit", "5"])
        #expect(trades.count == 5 && trades.allSatisfy { $0["source"] as? String == "trades" }, "\(trades)")
        #expect(try events(["--source", "trades", "--run", failed]).isEmpty)
        // What looks like SQL is a value like any other.
        #expect(try events(["--run", "\(failed)' OR '1'='1"]).isEmpty)
        #expect(try events(["--source", "tasks' --", "--type", "x\" OR 1=1"]).isEmpty)

        // The same filters over HTTP (the `events` command).
        let retried = try TaskAgent.http("GET", "/api/events?run=\(failed)&type=task.retrying&source=tasks", port: port)
        #expect((retried.json["events"] as? [[String: Any]])?.count == 2, "\(retried.body)")
        let injected = try TaskAgent.http("GET", "/api/events?run=%27%20OR%201%3D1--&limit=10", port: port)
        #expect(injected.status == 200 && (injected.json["events"] as? [[String: Any]])?.isEmpty == true, "\(injected.body)")
        let control = try TaskAgent.http("GET", "/api/events?run=a%01b", port: port)
        #expect(control.status == 400, "a control character is refused: \(control.body)")

        // Found by the index, not by reading every event.
        let reader = try StoreReader(path: agent.directory + "/.agent/data/agent.sqlite")
        let plan = try reader.database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN SELECT id FROM events WHERE id > ? AND run_id IN (?) ORDER BY id DESC LIMIT 100",
                             arguments: [0, failed]).map { $0["detail"] as String }
        }
        #expect(plan.contains { $0.contains("events_run") }, "\(plan)")
    }
}
