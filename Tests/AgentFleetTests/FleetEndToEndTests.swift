#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Real agents (`agent-control console`) sharing one real PostgreSQL database: one task's
/// runs, submitted to either, carried out once each by whichever has room; membership with
/// heartbeats; a killed agent's run rescued by the other after its lease.
@Suite(.ownThreads, .serialized) struct FleetEndToEndTests {
    static let token = "fleet-test-token-0123456789"

    /// An agent of the fleet `database`, whose task `work` appends "RUN_ID ATTEMPT AGENT" to `log`.
    static func agent(_ id: String, database: String, log: String, sleep: Double = 0.2, lease: Double = 5,
                      server: PostgresTestServer? = nil, modules: String = "[]", processes: String = "{}",
                      maxInterruptions: Int = TaskDefinition.defaultMaxInterruptions) throws -> (AgentRun, Int) {
        let server = try server ?? PostgresTestServer.require()
        let settings = #"""
            {"enabled_modules": \#(modules), "processes": \#(processes),
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\#(id)",
                       "lease": \#(lease), "heartbeat": 2, "poll": 0.5},
             "tasks": {"work": {"type": "command", "shell": true, "max_concurrent": 2,
                                "retries": {"max": 0}, "max_interruptions": \#(maxInterruptions),
                                "command": "echo \"$AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT start\" >> \#(log); sleep \#(sleep); echo \"$AGENT_TASK_RUN_ID $AGENT_TASK_ATTEMPT $FLEET_AGENT end\" >> \#(log)"}}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"],
                               environment: ["AGENT_API_TOKEN": token, "PGPASSWORD": PostgresTestServer.password, "FLEET_AGENT": id],
                               directory: TestPaths.temporaryDirectory("fleet-\(id)"))
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

    static func submit(port: Int) throws -> String {
        let answer = try HTTPProbe.request("POST", "/api/tasks/work/run", port: port, token: token, body: "{}")
        guard answer.status == 200, let id = (answer.json["run"] as? [String: Any])?["id"] as? String else {
            throw HTTPProbe.Failure(description: "the run was not queued: \(answer.status) \(answer.body)")
        }
        return id
    }

    /// Lines of the shared log: (run id, attempt, agent, start|end).
    static func entries(_ log: String) -> [(run: String, attempt: Int, agent: String, what: String)] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ").map(String.init)
            guard parts.count == 4, let attempt = Int(parts[1]) else { return nil }
            return (parts[0], attempt, parts[2], parts[3])
        }
    }

    /// Polls `condition` with a task's sleep: a thread's would hold one of the few threads
    /// every test of this process shares (2 on a 2-core host), and stall the others.
    static func wait(timeout: Double = 90, _ condition: () throws -> Bool) async rethrows -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if try condition() { return true }
            try? await Task.sleep(for: .milliseconds(100))
        }
        return try condition()
    }

    /// The runs as the shared database has them (read by the test itself).
    static func storedRuns(database: String) async throws -> [TaskRun] {
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "reader"),
                                                         logger: Logger(label: "test"))
        let runs = try await store.runs.list(RunFilter(task: "work", limit: 10_000)).map(\.run)
        await store.shutDown()
        return runs
    }

    static func fleetStatus(_ agent: AgentRun) throws -> JSONValue {
        let result = try runProgram("agent-control", ["fleet", "status", "--json", "--settings", agent.settingsFile], timeout: 60)
        guard result.status == 0 else { throw HTTPProbe.Failure(description: "fleet status: \(result.status) \(result.stdout)\(result.stderr)") }
        return try JSONValue.parse(Data(result.stdout.utf8))
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func twoAgentsShareOneTasksRunsAndEachRunIsCarriedOutOnce() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-shared")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/runs.log"
        let (a, portA) = try Self.agent("host-a", database: database, log: log)
        defer { _ = a.stop() }
        let (b, portB) = try Self.agent("host-b", database: database, log: log)
        defer { _ = b.stop() }

        var ids: [String] = []
        for index in 0..<40 { ids.append(try Self.submit(port: index % 2 == 0 ? portA : portB)) }
        let finished = await Self.wait { Self.entries(log).filter { $0.what == "end" }.count >= 40 }
        #expect(finished, "not every run ended:\n\(a.transcript)\n\(b.transcript)")
        // A little longer: a run carried out twice would show now.
        try await Task.sleep(for: .seconds(1.5))
        let starts = Self.entries(log).filter { $0.what == "start" }
        #expect(starts.count == 40, "each run is carried out once: \(starts.count) starts for 40 runs")
        #expect(Set(starts.map(\.run)) == Set(ids))
        let byAgent = Dictionary(grouping: starts, by: \.agent).mapValues(\.count)
        #expect(byAgent["host-a", default: 0] > 0 && byAgent["host-b", default: 0] > 0, "both agents take some: \(byAgent)")

        let stored = try await Self.storedRuns(database: database)
        #expect(stored.count == 40)
        #expect(stored.allSatisfy { $0.status == .succeeded && $0.attempt == 1 }, "\(stored.map { "\($0.id) \($0.status) \($0.attempt)" })")

        // Membership: both agents, alive, with their host, version and runs; a killed one is lost.
        let status = try Self.fleetStatus(a)
        let agents = status["agents"]?.arrayValue ?? []
        #expect(agents.compactMap { $0["agent_id"]?.stringValue } == ["host-a", "host-b"], "\(status.serialized())")
        #expect(agents.allSatisfy { $0["state"] == "alive" && $0["host"]?.stringValue?.isEmpty == false && $0["version"]?.stringValue != nil })
        kill(b.process.processIdentifier, SIGKILL)
        let lost = try await Self.wait(timeout: 30) {
            try Self.fleetStatus(a)["agents"]?.arrayValue?.first { $0["agent_id"] == "host-b" }?["state"] == "lost"
        }
        #expect(lost, "an agent whose heartbeat lapsed is shown lost")
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aKilledAgentsRunIsRescuedAfterItsLeaseWithTheSameIdAndItsLateResultIsNotRecorded() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-rescue")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/runs.log"
        // Only B runs first: the run is surely B's.
        // B's attempt lasts far longer than any pause of this test process (which a full suite
        // stalls for a minute at times): B finished a 4 s attempt before the kill came.
        let (b, portB) = try Self.agent("host-b", database: database, log: log, sleep: 120, lease: 2)
        let id = try Self.submit(port: portB)
        #expect(await Self.wait(timeout: 60) { Self.entries(log).contains { $0.run == id && $0.agent == "host-b" } }, "\(b.transcript)")
        // B dies mid-run, as a host lost: nothing of it renews the lease or writes a result.
        kill(b.process.processIdentifier, SIGKILL)
        _ = b.waitForExit(timeout: 10)
        #expect(!Self.entries(log).contains { $0.run == id && $0.what == "end" }, "B was killed mid-run")
        let (a, _) = try Self.agent("host-a", database: database, log: log, sleep: 0.2, lease: 2)
        defer { _ = a.stop() }
        let rescued = await Self.wait(timeout: 60) { Self.entries(log).contains { $0.run == id && $0.agent == "host-a" && $0.what == "end" } }
        // What the database has of it, for when it was not rescued.
        let seen = rescued ? "" : ((try? await Self.storedRuns(database: database)) ?? []).map { "\($0.id) \($0.status) attempt \($0.attempt)" }.joined(separator: ", ")
        #expect(rescued, "the run was not rescued: \(seen)\n\(a.transcript)\nB:\n\(b.transcript)")
        let byA = Self.entries(log).first { $0.run == id && $0.agent == "host-a" }
        #expect(byA?.attempt == 2, "the rescue is the next attempt of the same run")
        try await Task.sleep(for: .seconds(1))
        let stored = try #require(try await Self.storedRuns(database: database).first { $0.id == id })
        #expect(stored.status == .succeeded)
        #expect(stored.attempt == 2)
        #expect(stored.interruptions == 1, "B's attempt was interrupted: not an attempt of the retry policy")
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aKilledAgentsRunPastMaxInterruptionsIsAbandonedByTheAgentThatClaimsIt() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-abandon")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/runs.log"
        let (b, portB) = try Self.agent("host-b", database: database, log: log, sleep: 120, lease: 2, maxInterruptions: 0)
        let id = try Self.submit(port: portB)
        #expect(await Self.wait(timeout: 60) { Self.entries(log).contains { $0.run == id && $0.agent == "host-b" } }, "\(b.transcript)")
        kill(b.process.processIdentifier, SIGKILL)
        _ = b.waitForExit(timeout: 10)
        let (a, _) = try Self.agent("host-a", database: database, log: log, sleep: 0.2, lease: 2, maxInterruptions: 0)
        defer { _ = a.stop() }
        // Once B's lease lapses, A claims the run and finds it interrupted more than its task allows.
        let deadline = Date().addingTimeInterval(90)
        var found: TaskRun?
        repeat {
            try await Task.sleep(for: .seconds(0.5))
            found = try await Self.storedRuns(database: database).first { $0.id == id }
        } while found?.status.isFinished != true && Date() < deadline
        let stored = try #require(found)
        #expect(stored.status.isFinished, "\(stored.status)\n\(a.transcript)")
        #expect(stored.status == .abandoned, "\(stored.status): \(stored.error ?? "")")
        #expect(stored.interruptions == 1)
        #expect(stored.attempt == 1, "the claim that abandoned it began no attempt")
        #expect(stored.error?.contains("max_interruptions (0)") == true, "\(stored.error ?? "")")
        #expect(!Self.entries(log).contains { $0.run == id && $0.agent == "host-a" }, "A did not run it")
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func withTheDatabaseAwayLocalProcessesRunRunsWaitAndAreCaughtUpWhenItIsBack() async throws {
        // A server of its own: this test stops it.
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let database = try server.makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-lost")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/runs.log"
        let (a, port) = try Self.agent("host-a", database: database, log: log, server: server, modules: #"["sample"]"#,
                                       processes: #"{"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.05}}"#)
        defer { _ = a.stop() }
        let first = try Self.submit(port: port)
        #expect(await Self.wait(timeout: 60) { Self.entries(log).contains { $0.run == first && $0.what == "end" } }, "\(a.transcript)")

        try server.pause()
        // /readyz says the fleet's state; a fleet degraded does not make the agent unready.
        let readyz = { () throws -> (status: Int, fleet: String) in
            let answer = try HTTPProbe.request("GET", "/readyz", port: port, token: Self.token)
            return (answer.status, try JSONValue.parse(Data(answer.body.utf8))["fleet"]?.stringValue ?? answer.body)
        }
        let degraded = try await Self.wait(timeout: 30) { try readyz().fleet.hasPrefix("degraded: ") }
        #expect(degraded, "/readyz says the fleet is degraded: \((try? readyz().fleet) ?? "")")
        #expect(try readyz().status == 200, "ready for local work")
        #expect(await Self.wait(timeout: 30) { a.stderrLines.contains { $0.contains("fleet: no answer from") } },
                "the log says the database does not answer:\n\(a.transcript)")
        // Local processes go on: their events keep coming.
        let events = { a.jsonLines.filter { $0["kind"] as? String == "event" && $0["type"] as? String == "trade" }.count }
        let before = events()
        #expect(await Self.wait(timeout: 30) { events() > before + 5 }, "the local process stopped with the database:\n\(a.transcript)")
        // A run asked for now is accepted and waits, counted.
        let second = try Self.submit(port: port)
        let status = try runProgram("agent-control", ["status", "--json", "--settings", a.settingsFile], timeout: 60)
        let fleet = try JSONValue.parse(Data(status.stdout.utf8))["fleet"]
        #expect(fleet?["degraded"]?.stringValue != nil, "\(status.stdout)")
        #expect((fleet?["backlog"]?.numberValue?.intValue ?? 0) >= 1, "the run's change waits for the database: \(status.stdout)")
        #expect(!Self.entries(log).contains { $0.run == second }, "nothing can claim it while the database is away")
        // Its leadership unrenewed past the lease, it stops firing schedules.
        let stepsDown = try await Self.wait(timeout: 30) {
            let status = try runProgram("agent-control", ["status", "--json", "--settings", a.settingsFile], timeout: 60)
            return try JSONValue.parse(Data(status.stdout.utf8))["fleet"]?["leads_schedules"] == false
        }
        #expect(stepsDown, "a leader that cannot renew its lease steps down:\n\(a.transcript)")

        try server.resume()
        #expect(await Self.wait(timeout: 60) { Self.entries(log).contains { $0.run == second && $0.what == "end" } },
                "the waiting run was written and carried out once the database was back:\n\(a.transcript)")
        let recovered = try await Self.wait(timeout: 30) { try readyz().fleet == "joined" }
        #expect(recovered, "joined again: \((try? readyz().fleet) ?? "")")
        #expect(await Self.wait(timeout: 30) { a.stderrLines.contains { $0.contains("fleet: the database answers again") } },
                "the log says the database is back:\n\(a.transcript)")
        let leadsAgain = try await Self.wait(timeout: 30) {
            let status = try runProgram("agent-control", ["status", "--json", "--settings", a.settingsFile], timeout: 60)
            return try JSONValue.parse(Data(status.stdout.utf8))["fleet"]?["leads_schedules"] == true
        }
        #expect(leadsAgain, "the only agent leads the schedules again:\n\(a.transcript)")
    }
}
#endif
