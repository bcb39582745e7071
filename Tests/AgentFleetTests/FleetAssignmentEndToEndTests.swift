#if Fleet
import AgentTestSupport
import Foundation
import Testing

/// Real agents sharing one real PostgreSQL database, with a task whose strategy is
/// `round_robin`: the agent a run is submitted to chooses among the fleet's agents, the chosen
/// one carries it out; a killed agent's assignments are carried out by another after the hold.
@Suite(.ownThreads, .serialized) struct FleetAssignmentEndToEndTests {
    /// An agent whose task `work` appends "RUN_ID ATTEMPT AGENT start|end" to `log`.
    static func agent(_ id: String, database: String, log: String, hold: Double) throws -> (AgentRun, Int) {
        let server = try PostgresTestServer.require()
        let settings = #"""
            {"enabled_modules": [], "processes": {}, "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\#(id)",
                       "lease": 5, "heartbeat": 3, "poll": 0.5, "assignment_hold": \#(hold)},
             "assignment": {"strategy": "round_robin"},
             "tasks": {"work": {"type": "command", "shell": true, "max_concurrent": 20, "retries": {"max": 0},
                                "command": "echo \"$AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT start\" >> \#(log); sleep 0.2; echo \"$AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT end\" >> \#(log)"}}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"],
                               environment: ["AGENT_API_TOKEN": FleetEndToEndTests.token, "PGPASSWORD": PostgresTestServer.password, "FLEET_AGENT": id],
                               directory: TestPaths.temporaryDirectory("fleet-assign-\(id)"))
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

    /// Queues a run of `work` on the agent at `port`: its id and the agent chosen for it.
    static func submit(port: Int) throws -> (id: String, assigned: String?) {
        let answer = try HTTPProbe.request("POST", "/api/tasks/work/run", port: port, token: FleetEndToEndTests.token, body: "{}")
        guard answer.status == 200, let run = answer.json["run"] as? [String: Any], let id = run["id"] as? String else {
            throw HTTPProbe.Failure(description: "the run was not queued: \(answer.status) \(answer.body)")
        }
        return (id, run["assigned_agent"] as? String)
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func roundRobinSpreadsOneAgentsSubmissionsAcrossTheFleetAndALostAgentsAssignmentsAreCarriedOutByAnother() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-assign")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/runs.log"
        // A hold far longer than the chosen agent needs to claim, even on a loaded host: a run
        // is carried out by another agent only when its chosen one is gone.
        let (a, portA) = try Self.agent("host-a", database: database, log: log, hold: 10)
        defer { _ = a.stop() }
        let (b, _) = try Self.agent("host-b", database: database, log: log, hold: 10)
        defer { _ = b.stop() }

        // Room for every run on each agent (round robin skips a full one).
        // A chooses among the agents its last read of the members showed: until B's first
        // heartbeat is read, only itself. Runs submitted until one is B's.
        var probes: [String] = []
        // At least 60 probes as well as 60 s: a test process whose shared threads other tests'
        // blocking waits hold got two probes out in 100 s, and gave up.
        let deadline = Date().addingTimeInterval(60)
        var seesB = false
        while !seesB, Date() < deadline || probes.count < 60 {
            let run = try Self.submit(port: portA)
            probes.append(run.id)
            seesB = run.assigned == "host-b"
            if !seesB { try await Task.sleep(for: .milliseconds(100)) }
        }
        #expect(seesB, "A never chose B (\(probes.count) probes):\n\(a.transcript)\n\(b.transcript)")

        // Twenty runs, all submitted to A: in turn to each agent, each carried out by its choice.
        var spread: [(id: String, assigned: String?)] = []
        for _ in 0..<20 { spread.append(try Self.submit(port: portA)) }
        let assigned = spread.compactMap(\.assigned)
        #expect(assigned.count == 20, "each run names its agent")
        #expect(zip(assigned, assigned.dropFirst()).allSatisfy { $0 != $1 }, "round robin alternates: \(assigned)")
        let ids = Set(spread.map(\.id) + probes)
        let ended = await FleetEndToEndTests.wait { FleetEndToEndTests.entries(log).filter { $0.what == "end" && ids.contains($0.run) }.count >= ids.count }
        #expect(ended, "not every run ended:\n\(a.transcript)\n\(b.transcript)")
        var stored = Dictionary(uniqueKeysWithValues: try await FleetEndToEndTests.storedRuns(database: database).map { ($0.id, $0) })
        let byAgent = Dictionary(grouping: spread.compactMap { stored[$0.id]?.agent }, by: { $0 }).mapValues(\.count)
        #expect(byAgent == ["host-a": 10, "host-b": 10], "carried out by agent: \(byAgent)")
        for run in spread {
            let record = stored[run.id]
            #expect(record?.status == .succeeded && record?.attempt == 1, "\(run.id): \(String(describing: record))")
            #expect(record?.assignedAgent == run.assigned && record?.agent == run.assigned, "\(run.id) chosen \(run.assigned ?? "-"), ran on \(record?.agent ?? "-")")
        }
        let starts = FleetEndToEndTests.entries(log).filter { $0.what == "start" && ids.contains($0.run) }
        #expect(starts.count == ids.count, "each run carried out once")

        // What the strategies chose by, as `fleet status` shows it: each agent's tasks, running/max.
        let status = try runProgram("agent-control", ["fleet", "status", "--settings", a.settingsFile], timeout: 60)
        let lines = status.stdout.split(separator: "\n").map(String.init)
        for agent in ["host-a", "host-b"] {
            #expect(lines.contains { $0.hasPrefix(agent + " ") && $0.contains("tasks work ") && $0.contains("/20") }, "\(status.stdout)")
        }

        // B dies. A still counts it alive until three heartbeats are missed: runs it gives B
        // wait for the hold, then A carries them out (their first attempt: B never claimed them).
        // Submitted at once, before B's exit is waited for: on a loaded machine that wait let A
        // find B lost before the first submission (none was given to B).
        kill(b.process.processIdentifier, SIGKILL)
        var late: [(id: String, assigned: String?)] = []
        for _ in 0..<6 { late.append(try Self.submit(port: portA)) }
        _ = b.waitForExit(timeout: 10)
        let orphaned = late.filter { $0.assigned == "host-b" }
        #expect(!orphaned.isEmpty, "A gave B some runs before it found B lost: \(late.map { $0.assigned ?? "-" })")
        let lateIDs = Set(late.map(\.id))
        let done = await FleetEndToEndTests.wait { FleetEndToEndTests.entries(log).filter { $0.what == "end" && lateIDs.contains($0.run) }.count >= late.count }
        #expect(done, "the lost agent's runs were not carried out:\n\(a.transcript)")
        // The command logs its end before the agent records the run's success: wait for the records.
        let recorded = Date().addingTimeInterval(60)
        repeat {
            stored = Dictionary(uniqueKeysWithValues: try await FleetEndToEndTests.storedRuns(database: database).map { ($0.id, $0) })
            if late.allSatisfy({ stored[$0.id]?.status.isFinished == true }) { break }
            try await Task.sleep(for: .milliseconds(200))
        } while Date() < recorded
        for run in late {
            let record = stored[run.id]
            #expect(record?.status == .succeeded && record?.attempt == 1 && record?.agent == "host-a",
                    "\(run.id) chosen \(run.assigned ?? "-"): \(String(describing: record))")
        }
    }
}
#endif
