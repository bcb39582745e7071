#if Fleet
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A run waiting in the fleet's shared queue is cancelled from any agent: `task cancel` said
/// it had "already finished (queued)", and a run requiring labels no agent has waited for
/// ever, with no way to remove it.
@Suite(.ownThreads, .serialized) struct FleetCancelEndToEndTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aQueuedRunOfTheSharedQueueIsCancelledAndOneRunningHereAsBefore() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let agent = try AgentRun.fleetAgent("canceller", database: database, folder: "fleet-cancel", settings: #"""
            "enabled_modules": [], "processes": {},
            "tasks": {"work": {"type": "command", "shell": true, "command": "sleep 30"}}
            """#)
        defer { _ = agent.stop() }
        func submit(_ extra: [String]) throws -> String {
            let result = try agent.control(["task", "run", "work", "--json"] + extra)
            guard result.status == 0, let id = try JSONValue.parse(Data(result.stdout.utf8))["id"]?.stringValue else {
                throw HTTPProbe.Failure(description: "not queued: \(result.status) \(result.stdout)\(result.stderr)")
            }
            return id
        }
        // Labels no agent carries: queued for ever.
        let stranded = try submit(["--require", "nobody=here"])
        let cancelled = try agent.control(["task", "cancel", stranded])
        #expect(cancelled.status == 0, "\(cancelled.stdout)\(cancelled.stderr)")
        let shown = try JSONValue.parse(Data(try agent.control(["task", "show", stranded, "--json"]).stdout.utf8))
        #expect(shown["status"] == "cancelled", "\(shown.serialized())")
        let again = try agent.control(["task", "cancel", stranded])
        #expect(again.status != 0 && again.stderr.contains("has already finished (cancelled)"), "\(again.stderr)")

        // One this agent runs is cancelled as before.
        let running = try submit([])
        #expect(await FleetEdgesEndToEndTests.wait {
            (try? JSONValue.parse(Data(agent.control(["task", "show", running, "--json"]).stdout.utf8)))?["status"] == "running"
        }, "\(agent.transcript)")
        #expect(try agent.control(["task", "cancel", running]).status == 0)
    }

    /// While the fleet's database is away a run cannot be looked up: "no run with id" was the
    /// answer for a run accepted a moment before, which then ran once the database was back.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aRunThatCannotBeLookedUpWhileTheDatabaseIsAwayIsNotCalledUnknown() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let database = try server.makeDatabase()
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "away",
                       "heartbeat": 0.5, "poll": 0.5}, "enabled_modules": [], "processes": {},
             "tasks": {"work": {"type": "command", "shell": true, "command": "true"}}}
            """#
        let agent = try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                                 directory: TestPaths.temporaryDirectory("fleet-cancel-away"))
        defer { _ = agent.stop(signal: SIGKILL, timeout: 30) }
        #expect(agent.waitForLine(onStderr: true, timeout: 120) { $0.contains("fleet: agent away on") } != nil, "\(agent.transcript)")
        try server.pause()
        let cancelled = try agent.control(["task", "cancel", "no-such-run"])
        #expect(cancelled.status != 0 && cancelled.stderr.contains("run no-such-run cannot be looked up now"), "\(cancelled.stdout)\(cancelled.stderr)")
    }
}
#endif
