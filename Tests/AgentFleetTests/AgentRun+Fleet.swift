import AgentTestSupport
import Foundation

extension AgentRun {
    /// A real agent (`agent-control console --json`) of a fleet on the tests' PostgreSQL
    /// server, started, answering on its control socket and joined to the fleet. `settings`: the document's other
    /// members; its `"fleet"` (agent `id`, heartbeat and poll 0.5 s, the types it `publish`es) is added here.
    static func fleetAgent(_ id: String, database: String, folder: String, settings: String, publish: [String] = []) throws -> AgentRun {
        let server = try PostgresTestServer.require()
        let published = publish.map { "\"\($0)\"" }.joined(separator: ", ")
        let document = #"""
            {"fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\#(id)",
                       "heartbeat": 0.5, "poll": 0.5, "publish": [\#(published)]},
             \#(settings)}
            """#
        let run = try AgentRun(settings: document, arguments: ["--no-build", "--json"], environment: ["PGPASSWORD": PostgresTestServer.password],
                               directory: TestPaths.temporaryDirectory(folder))
        guard run.waitForLine(onStderr: true, { $0.contains("control socket:") }) != nil,
              run.waitForLine(onStderr: true, { $0.contains("fleet: agent \(id) on") }) != nil else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "agent \(id) did not start:\n\(run.transcript)")
        }
        return run
    }

    /// `agent-control ARGUMENTS --settings` this agent's file.
    func control(_ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", settingsFile], timeout: 120)
    }
}
