#if Fleet
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A `task_runs` row whose record an agent cannot read (another version's, or other hands')
/// was claimed again at every lapse of its lease, running nothing each time and keeping it from
/// the agents that could read it. It is claimed once, said once, and left alone after.
@Suite(.ownThreads, .serialized) struct FleetUnreadableRunTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aRunWhoseRecordCannotBeReadIsClaimedOnceAndLeftAlone() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "reader",
                       "lease": 1, "heartbeat": 0.5, "poll": 0.2},
             "enabled_modules": [], "processes": {},
             "tasks": {"work": {"type": "command", "shell": true, "command": "true"}}}
            """#
        let agent = try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                                 directory: TestPaths.temporaryDirectory("fleet-unreadable-run"))
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true, timeout: 120) { $0.contains("fleet: agent reader on") } != nil, "\(agent.transcript)")
        try server.sql(database: database, """
            INSERT INTO task_runs (id, task, status, finished, priority, due, data) VALUES ('garbage-1', 'work', 'queued', false, 0, 0, '{not json')
            """)
        #expect(agent.waitForLine(onStderr: true, timeout: 60) { $0.contains("fleet: run garbage-1 of task work has a record this agent cannot read") } != nil,
                "\(agent.transcript)")
        func column(_ sql: String) throws -> String { try server.sql(database: database, sql).trimmingCharacters(in: .whitespacesAndNewlines) }
        // Its lease lapses; then a claim made after it (a real run, carried out) passes it by.
        #expect(try await FleetEdgesEndToEndTests.wait(timeout: 60) {
            try column("SELECT count(*) FROM task_runs WHERE id = 'garbage-1' AND lease_until < extract(epoch FROM clock_timestamp())") == "1"
        })
        for _ in 0..<3 {
            let result = try agent.control(["task", "run", "work", "--wait", "--json"])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
        #expect(try column("SELECT claims FROM task_runs WHERE id = 'garbage-1'") == "1", "claimed again")
        #expect(agent.stderrLines.filter { $0.contains("garbage-1") }.count == 1, "\(agent.transcript)")
    }
}
#endif
