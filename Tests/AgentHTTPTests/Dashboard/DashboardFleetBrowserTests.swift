import AgentTestSupport
import Foundation
import Testing

/// The dashboard's fleet page in a real browser (Chromium over WebDriver): two real agents on
/// one real PostgreSQL database, each listed with its host, version, processes, executors,
/// runs, load and last heartbeat; the other agent killed is shown lost by the page's refresh.
@Suite(.ownThreads, .serialized) struct DashboardFleetBrowserTests {
    static func fleet(_ id: String, database: String) throws -> String {
        #"""
        "fleet": {"postgres": "\#(try PostgresTestServer.require().url(database: database))", "password": "${env:PGPASSWORD}",
                  "agent_id": "\#(id)", "heartbeat": 2, "poll": 0.5, "publish": ["alert"]}
        """#
    }

    static var hostName: String {
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        return String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    @Test(.enabled(if: WebDriver.unavailableReason == nil && PostgresTestServer.unavailableReason == nil,
                   "needs a browser and a PostgreSQL server: \(WebDriver.unavailableReason ?? "") \(PostgresTestServer.unavailableReason ?? "")"))
    func theFleetPageListsEveryAgentAndShowsAKilledOneLost() throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let environment = ["PGPASSWORD": PostgresTestServer.password]
        // host-b: a process and a declared executor, no HTTP.
        let b = try AgentRun(settings: #"""
            {"enabled_modules": ["faults"],
             "processes": {"ticker": {"type": "fault", "tick_ms": 200}, "pool": {"type": "executor", "max_concurrent": 2, "tasks": {"work": {}}}},
             "tasks": {"work": {"type": "faults.fault_task"}},
             \#(try Self.fleet("host-b", database: database))}
            """#, environment: environment)
        defer { _ = b.stop() }
        #expect(b.waitForLine(onStderr: true) { $0.contains("fleet: agent host-b on") } != nil, "\(b.transcript)")

        let login = try DashboardLogin(settings: #"""
            {"enabled_modules": [], "processes": {},
             "http": {"listen": "127.0.0.1:0", "users": {"alice": {"password_hash": "HASH"}}},
             \#(try Self.fleet("host-a", database: database))}
            """#, page: "/fleet", showing: "#fleet-agents", environment: environment)
        defer { login.close() }
        let browser = login.browser
        let rowA = #"tr[data-agent="host-a"]"#, rowB = #"tr[data-agent="host-b"]"#
        // Both agents (one that joined after the page was rendered appears by the refresh).
        try browser.wait("both agents listed", timeout: 30) { try browser.find(rowA) != nil && browser.find(rowB) != nil }
        let version = try runProgram("agent-control", ["--version"]).stdout
        #expect(try browser.text(rowA + #" td[data-label="Agent"]"#) == "host-a (this one)")
        #expect(try browser.text(rowB + #" td[data-label="Agent"]"#) == "host-b")
        for row in [rowA, rowB] {
            #expect(try browser.text(row + #" [data-field="host"]"#) == Self.hostName)
            let shown = try browser.text(row + #" [data-field="version"]"#)
            #expect(!shown.isEmpty && version.contains(shown), "version shown \(shown); agent-control --version: \(version)")
            #expect(try browser.text(row + #" [data-field="state"]"#) == "alive")
            #expect(try browser.text(row + #" [data-field="heartbeat"]"#).hasSuffix("Z"))
            #expect(Double(try browser.text(row + #" [data-field="load"]"#)) != nil)
        }
        #expect(try browser.text(rowA + #" [data-field="processes"]"#) == "0/0 running")
        #expect(try browser.text(rowA + #" [data-field="executors"]"#) == "implicit")
        // host-b's process running and its executor (executors are not among the processes), as its heartbeats tell.
        let processesB = { try browser.text(rowB + #" [data-field="processes"]"#) }
        do {
            try browser.wait("host-b's processes running", timeout: 30) { try processesB() == "1/1 running" }
        } catch {
            Issue.record("host-b's processes shown: \(try processesB()); its settings have one, ticker")
            throw error
        }
        #expect(try browser.text(rowB + #" [data-field="executors"]"#) == "pool 0/2")
        #expect(try browser.text(rowB + #" [data-field="runs"]"#) == "0")
        #expect(try browser.text("#fleet-database").contains("reachable"))
        let events = try browser.text("#fleet-events")
        #expect(events.hasPrefix("Publishes: alert ("), "\(events)")

        // host-b killed: its heartbeat lapses and the page, refreshing itself, shows it lost.
        kill(b.process.processIdentifier, SIGKILL)
        try browser.wait("host-b shown lost", timeout: 30) { try browser.text(rowB + #" [data-field="state"]"#) == "lost" }
        #expect(try browser.text(rowA + #" [data-field="state"]"#) == "alive")
    }
}
