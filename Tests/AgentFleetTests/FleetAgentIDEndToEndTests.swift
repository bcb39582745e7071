#if Fleet
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// One live agent per `agent_id`: a copied settings.json gave two agents the same one, both
/// joined and each led the schedules as that agent, so that every planned time fired twice.
@Suite(.ownThreads, .serialized) struct FleetAgentIDEndToEndTests {
    /// An agent of agent_id "twin" whose schedule `often` runs the task `report` every second.
    static func twin(_ folder: String, server: PostgresTestServer, database: String, heartbeat: Double) throws -> AgentRun {
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "twin",
                       "heartbeat": \#(heartbeat), "poll": 0.5},
             "enabled_modules": [], "processes": {},
             "tasks": {"report": {"type": "command", "shell": true, "command": "true"}},
             "schedules": {"often": {"every": 1, "run": {"task": "report"}}}}
            """#
        return try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                            directory: TestPaths.temporaryDirectory(folder))
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aSecondAgentWithTheSameAgentIDJoinsOnlyOnceTheFirstIsGone() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        // Heartbeats a minute apart: the silence rule would keep the second out for two to three
        // minutes after the first's last heartbeat; the first's process gone lets it in at its
        // next try (at most 30 s apart).
        func agent(_ folder: String) throws -> AgentRun { try Self.twin(folder, server: server, database: database, heartbeat: 60) }
        let first = try agent("fleet-twin-a")
        var firstStopped = false
        defer { if !firstStopped { _ = first.stop() } }
        #expect(first.waitForLine(onStderr: true, timeout: 120) { $0.contains("fleet: agent twin on") } != nil, "\(first.transcript)")
        let second = try agent("fleet-twin-b")
        defer { _ = second.stop() }
        #expect(second.waitForLine(onStderr: true, timeout: 120) { $0.contains(#"another agent is in the fleet as agent_id "twin""#) } != nil,
                "\(second.transcript)")
        #expect(!second.stderrLines.contains { $0.contains("fleet: agent twin on") }, "the second joined beside the first:\n\(second.transcript)")
        let status = try JSONValue.parse(Data(try second.control(["status", "--json"]).stdout.utf8))
        #expect(status["fleet"]?["state"] == "joining", "\(status["fleet"]?.serialized() ?? "")")

        #expect(first.stop() == 0, "\(first.transcript)")
        firstStopped = true
        #expect(second.waitForLine(onStderr: true, timeout: 90) { $0.contains("fleet: agent twin on") } != nil, "\(second.transcript)")
    }

    /// Two agents with one agent_id started at the same moment both joined (each read the row
    /// before the other wrote it) and both led the schedules: joining takes the row in one
    /// statement that only one of them can win. A lock on the table holds both at the join, so
    /// that they meet there whatever the machine's speed.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func ofTwoAgentsWithOneAgentIDJoiningAtOnceOnlyOneJoins() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        // The schema first, by an agent of another id, then the lock.
        let other = try AgentRun.fleetAgent("other", database: database, folder: "fleet-same-moment-other", settings: #""enabled_modules": [], "processes": {}"#)
        defer { _ = other.stop() }
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "twin",
                       "heartbeat": 0.5, "poll": 0.5}, "enabled_modules": [], "processes": {}}
            """#
        let locker = Process()
        locker.executableURL = URL(fileURLWithPath: "/usr/bin/psql")
        locker.arguments = [server.url(database: database), "-X", "-q", "-c", "BEGIN; LOCK TABLE fleet_agents IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(4); COMMIT;"]
        locker.environment = ["PGPASSWORD": PostgresTestServer.password]
        try locker.run()
        defer { locker.waitUntilExit() }
        let agents = try ["twin-a", "twin-b"].map {
            try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                         directory: TestPaths.temporaryDirectory("fleet-same-moment-" + $0))
        }
        defer { for agent in agents { _ = agent.stop() } }
        func joined(_ agent: AgentRun) -> Bool { agent.stderrLines.contains { $0.contains("fleet: agent twin on") } }
        func refused(_ agent: AgentRun) -> Bool { agent.stderrLines.contains { $0.contains(#"as agent_id "twin""#) } }
        #expect(await FleetEdgesEndToEndTests.wait(timeout: 120) { agents.allSatisfy { joined($0) || refused($0) } },
                "\(agents.map(\.transcript).joined(separator: "\n"))")
        #expect(agents.filter(joined).count == 1, "\(agents.map(\.transcript).joined(separator: "\n"))")
    }
    /// An agent stopped (SIGSTOP, a paused VM) past three heartbeats, whose agent_id another took
    /// meanwhile, kept leading the schedules when it resumed: the lease was held by the agent_id,
    /// which both had, so that both fired every planned time. A leader must now hold its
    /// `fleet_agents` row too; the resumed one steps down and what it fired is not written.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func anAgentResumedAfterItsAgentIDWasTakenStopsLeadingTheSchedules() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        func agent(_ folder: String) throws -> AgentRun { try Self.twin(folder, server: server, database: database, heartbeat: 0.5) }
        func leads(_ agent: AgentRun) -> Bool { agent.stderrLines.contains { $0.contains("fleet: this agent leads the schedules") } }
        func fires() throws -> Int { Int(try server.sql(database: database, "SELECT count(*) FROM schedule_history WHERE outcome = 'fired'")
            .trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1 }
        let first = try agent("fleet-paused-twin-a")
        let firstPid = first.process.processIdentifier
        defer {
            kill(firstPid, SIGCONT)
            _ = first.stop()
        }
        #expect(await FleetEdgesEndToEndTests.wait(timeout: 120) { leads(first) }, "\(first.transcript)")
        #expect(try await FleetEdgesEndToEndTests.wait(timeout: 60) { try fires() >= 1 }, "\(first.transcript)")

        kill(firstPid, SIGSTOP)
        let second = try agent("fleet-paused-twin-b")
        defer { _ = second.stop() }
        #expect(await FleetEdgesEndToEndTests.wait(timeout: 120) { leads(second) }, "\(second.transcript)")
        let byTheSecond = try fires()
        #expect(try await FleetEdgesEndToEndTests.wait(timeout: 60) { try fires() >= byTheSecond + 2 }, "\(second.transcript)")

        kill(firstPid, SIGCONT)
        #expect(await FleetEdgesEndToEndTests.wait(timeout: 90) {
            first.stderrLines.contains { $0.contains("fleet: this agent no longer leads the schedules") }
        }, "the resumed agent kept leading:\n\(first.transcript)")
        // Each planned time fired once, and the second still fires.
        let resumed = try fires()
        #expect(try await FleetEdgesEndToEndTests.wait(timeout: 60) { try fires() >= resumed + 2 }, "\(second.transcript)")
        let twice = try server.sql(database: database, """
            SELECT count(*) FROM (SELECT planned FROM schedule_history WHERE outcome = 'fired' GROUP BY planned HAVING count(*) > 1) AS d
            """).trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(twice == "0", "planned times fired twice: \(twice)\n\(first.transcript)\n\(second.transcript)")
        #expect(!second.stderrLines.contains { $0.contains("no longer leads the schedules") }, "\(second.transcript)")
    }
}
#endif
