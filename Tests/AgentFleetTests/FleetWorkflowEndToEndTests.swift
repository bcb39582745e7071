#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Workflow runs in a fleet, with real agents on one real PostgreSQL database: a run started
/// on an agent that is then `kill -9`'d is resumed by another once its lease lapsed, from its
/// step log — steps whose results were committed are not done again, the step in flight goes
/// on with the same idempotency key.
@Suite(.ownThreads, .serialized) struct FleetWorkflowEndToEndTests {
    /// An agent of the fleet `database` with the workflow `three` (steps s1, s2, s3, each a
    /// task run appending "KEY RUN_ID ATTEMPT AGENT start|end" to `log`). s2 lasts far longer on
    /// host-a (an hour) than any pause of the test process: host-a is surely killed while it
    /// runs (120 s was not: beside a load of 40-50, an awaiting test waited that long for a
    /// test thread between two of its steps).
    static func agent(_ id: String, database: String, log: String) throws -> (AgentRun, Int) {
        let server = try PostgresTestServer.require()
        let record = { (sleep: String) in
            "echo \\\"$AGENT_TASK_IDEMPOTENCY_KEY $AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT start\\\" >> \(log); sleep \(sleep); echo \\\"$AGENT_TASK_IDEMPOTENCY_KEY $AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT end\\\" >> \(log)"
        }
        let settings = #"""
            {"enabled_modules": [], "processes": {}, "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\#(id)",
                       "lease": 2, "heartbeat": 0.5, "poll": 0.5},
             "tasks": {"quick": {"type": "command", "shell": true, "retries": {"max": 0}, "command": "\#(record("0.2"))"},
                       "slow": {"type": "command", "shell": true, "retries": {"max": 0},
                                "command": "\#(record("$([ \\\"$FLEET_AGENT\\\" = host-a ] && echo 3600 || echo 0.3)"))"}},
             "workflows": {"three": {"steps": [{"id": "s1", "task": "quick"}, {"id": "s2", "task": "slow"}, {"id": "s3", "task": "quick"}]}}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"],
                               environment: ["AGENT_API_TOKEN": FleetEndToEndTests.token, "PGPASSWORD": PostgresTestServer.password, "FLEET_AGENT": id],
                               directory: TestPaths.temporaryDirectory("fleet-flow-\(id)"))
        let line = run.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        guard let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "agent \(id) did not start:\n\(run.transcript)")
        }
        // Joined: a run asked for before is refused (503) — the start waits only a moment for the database.
        guard run.waitForLine(onStderr: true, { $0.contains("fleet: agent \(id) on") }) != nil else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "agent \(id) did not join its fleet:\n\(run.transcript)")
        }
        return (run, port)
    }

    /// Lines of the shared log: (idempotency key, task run, attempt, agent, start|end).
    static func entries(_ log: String) -> [(key: String, run: String, attempt: Int, agent: String, what: String)] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 5, let attempt = Int(parts[2]) else { return nil }
            return (parts[0], parts[1], attempt, parts[3], parts[4])
        }
    }

    /// The run and its step log as the shared database has them (read by the test itself).
    static func stored(_ id: String, database: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "reader"),
                                                         logger: Logger(label: "test"))
        let found = try await store.workflows.run(id: id)
        await store.shutDown()
        return found
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aWorkflowRunOfAKilledAgentIsFinishedByAnotherFromItsStepLogEachCommittedStepDoneOnce() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-flow")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/steps.log"
        let (a, portA) = try Self.agent("host-a", database: database, log: log)
        let answer = try HTTPProbe.request("POST", "/api/workflows/three/run", port: portA, token: FleetEndToEndTests.token, body: "{}")
        let id = try #require((answer.json["run"] as? [String: Any])?["id"] as? String, "\(answer.status) \(answer.body)")
        // A is mid-run: s1 done, s2's task going (on A, the only agent).
        let midRun = await FleetEndToEndTests.wait(timeout: 60) { Self.entries(log).contains { $0.key == "\(id)/s2/1" && $0.what == "start" } }
        #expect(midRun, "\(a.transcript)")
        kill(a.process.processIdentifier, SIGKILL)
        _ = a.waitForExit(timeout: 10)
        #expect(!Self.entries(log).contains { $0.key == "\(id)/s2/1" && $0.what == "end" }, "A was killed while s2 ran")

        let (b, _) = try Self.agent("host-b", database: database, log: log)
        defer { _ = b.stop() }
        let finished = await FleetEndToEndTests.wait(timeout: 90) { Self.entries(log).contains { $0.key == "\(id)/s3/1" && $0.what == "end" } }
        #expect(finished, "B did not finish the run:\n\(b.transcript)\nA:\n\(a.transcript)")
        // B finishes the run once s3's result is committed (read from the database, not timed).
        var found: (run: WorkflowRun, steps: [WorkflowStepRecord])?
        for _ in 0..<100 {
            found = try await Self.stored(id, database: database)
            if found?.run.status.isFinished == true { break }
            try await Task.sleep(for: .milliseconds(200))
        }
        let (run, steps) = try #require(found)
        #expect(run.status == .succeeded, "\(run.storedJSON.serialized())")
        // The step log, as recorded: each step once, succeeded, its first attempt (a step in
        // flight goes on under its key; it is not a step retry).
        #expect(steps.map(\.stepID) == ["s1", "s2", "s3"])
        #expect(steps.allSatisfy { $0.status == .succeeded && $0.attempt == 1 }, "\(steps.map { $0.storedJSON.serialized() })")
        #expect(b.stderrLines.contains { $0.contains("workflow run \(id)") && $0.contains("taken over") }, "\(b.transcript)")

        // What ran: s1 once (by A, before the kill: not again), s2 by A then once more by B
        // with the same key and task run (its next attempt), s3 once (by B).
        let starts = Self.entries(log).filter { $0.what == "start" }
        let s1 = starts.filter { $0.key == "\(id)/s1/1" }, s2 = starts.filter { $0.key == "\(id)/s2/1" }, s3 = starts.filter { $0.key == "\(id)/s3/1" }
        #expect(s1.map(\.agent) == ["host-a"], "\(starts)")
        #expect(s2.map(\.agent) == ["host-a", "host-b"], "\(starts)")
        #expect(Set(s2.map(\.run)).count == 1, "the step in flight goes on as the same task run")
        #expect(s2.map(\.attempt) == [1, 2])
        #expect(s3.map(\.agent) == ["host-b"], "\(starts)")
        #expect(steps.first { $0.stepID == "s2" }?.taskRun == s2.first?.run)
    }
}
#endif
