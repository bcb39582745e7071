#if Fleet
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// One live agent per `agent_id`: a copied settings.json gave two agents the same one, both
/// joined and each led the schedules as that agent, so that every planned time fired twice.
@Suite(.ownThreads, .serialized) struct FleetAgentIDEndToEndTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aSecondAgentWithTheSameAgentIDJoinsOnlyOnceTheFirstIsGone() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let settings = #"""
            "enabled_modules": [], "processes": {},
            "tasks": {"report": {"type": "command", "shell": true, "command": "true"}},
            "schedules": {"often": {"every": 1, "run": {"task": "report"}}}
            """#
        let first = try AgentRun.fleetAgent("twin", database: database, folder: "fleet-twin-a", settings: settings)
        var firstStopped = false
        defer { if !firstStopped { _ = first.stop() } }
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "twin",
                       "heartbeat": 0.5, "poll": 0.5}, \#(settings)}
            """#
        let second = try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                                  directory: TestPaths.temporaryDirectory("fleet-twin-b"))
        defer { _ = second.stop() }
        #expect(second.waitForLine(onStderr: true, timeout: 120) { $0.contains(#"another agent is in the fleet as agent_id "twin""#) } != nil,
                "\(second.transcript)")
        #expect(!second.stderrLines.contains { $0.contains("fleet: agent twin on") }, "the second joined beside the first:\n\(second.transcript)")
        let status = try JSONValue.parse(Data(try second.control(["status", "--json"]).stdout.utf8))
        #expect(status["fleet"]?["state"] == "joining", "\(status["fleet"]?.serialized() ?? "")")

        #expect(first.stop() == 0, "\(first.transcript)")
        firstStopped = true
        // Its process is gone: the second joins at its next try, not three heartbeats later.
        #expect(second.waitForLine(onStderr: true, timeout: 120) { $0.contains("fleet: agent twin on") } != nil, "\(second.transcript)")
    }
}
#endif
