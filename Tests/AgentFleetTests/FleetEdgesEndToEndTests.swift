#if Fleet
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The fleet's edges (issue 36 item 3) with real agents (`agent-control console`) and a real
/// PostgreSQL: an agent whose database does not answer at start starts its local work, says
/// the fleet is degraded (status, /readyz, one log line) and joins when the database answers;
/// `on_event` on a `fleet:` type fires with no subscribing process; `schedule list` on an
/// agent that does not lead shows the fleet's schedules and the leader.
@Suite(.ownThreads, .serialized) struct FleetEdgesEndToEndTests {
    static let token = "fleet-edges-token-0123456789"

    static func wait(timeout: Double = 60, _ condition: () throws -> Bool) async rethrows -> Bool {
        try await FleetEndToEndTests.wait(timeout: timeout, condition)
    }

    static func statusJSON(_ agent: AgentRun) throws -> JSONValue {
        let result = try agent.control(["status", "--json"])
        return try JSONValue.parse(Data(result.stdout.utf8))
    }

    static func port(of agent: AgentRun) throws -> Int {
        let line = agent.waitForLine(onStderr: true) { $0.contains("http: listening on http://127.0.0.1:") }
        guard let port = line?.components(separatedBy: "http://127.0.0.1:").last.flatMap({ Int($0.prefix { $0.isNumber }) }) else {
            throw HTTPProbe.Failure(description: "the agent did not start:\n\(agent.transcript)")
        }
        return port
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func anAgentWhoseDatabaseIsDownStartsItsLocalWorkSaysDegradedOnceAndJoinsWhenItAnswers() async throws {
        // A server of its own, stopped before the agent starts: nothing listens on its port.
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let database = try server.makeDatabase()
        try server.pause()
        let folder = TestPaths.temporaryDirectory("fleet-late")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/ticks.log"
        let settings = #"""
            {"enabled_modules": ["sample"],
             "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 0.05}},
             "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"]},
             "fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "late",
                       "lease": 3, "heartbeat": 0.5, "poll": 0.5},
             "tasks": {"tick": {"type": "command", "shell": true, "command": "echo $AGENT_TASK_RUN_ID >> \#(log)"}},
             "schedules": {"every-second": {"every": 1, "run": {"task": "tick"}}}}
            """#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"],
                                 environment: ["AGENT_API_TOKEN": Self.token, "PGPASSWORD": PostgresTestServer.password],
                                 directory: TestPaths.temporaryDirectory("fleet-late-agent"))
        defer { _ = agent.stop() }
        let port = try Self.port(of: agent)

        // Its local datasource runs.
        let trades = { agent.jsonLines.filter { $0["kind"] as? String == "event" && $0["type"] as? String == "trade" }.count }
        #expect(await Self.wait { trades() >= 5 }, "the local process runs without the fleet's database:\n\(agent.transcript)")
        // Degraded: in status (JSON and human), and said by /readyz, which stays ready for local work.
        let fleet = try Self.statusJSON(agent)["fleet"]
        #expect(fleet?["joined"] == false, "\(fleet?.serialized() ?? "no fleet in status")")
        #expect(fleet?["degraded"]?.stringValue?.contains("not joined yet") == true, "\(fleet?.serialized() ?? "")")
        let human = try agent.control(["status"]).stdout
        #expect(human.contains("fleet: degraded as late"), "\(human)")
        let ready = try HTTPProbe.request("GET", "/readyz", port: port, token: Self.token)
        #expect(ready.status == 200, "ready for local work: \(ready.status) \(ready.body)")
        #expect(try JSONValue.parse(Data(ready.body.utf8))["fleet"]?.stringValue?.hasPrefix("degraded: not joined yet") == true, "\(ready.body)")
        // A run needs the fleet's queue: refused at once, with when to ask again.
        let refused = try HTTPProbe.request("POST", "/api/tasks/tick/run", port: port, token: Self.token, body: "{}")
        #expect(refused.status == 503 && refused.headers["retry-after"] != nil, "\(refused.status) \(refused.headers) \(refused.body)")
        #expect(refused.body.contains("has not joined its fleet yet"), "\(refused.body)")
        // One line says it cannot reach the database; the client library's retries are not logged.
        #expect(await Self.wait { agent.stderrLines.contains { $0.contains("fleet: cannot reach") } }, "\(agent.transcript)")
        #expect(await Self.wait { (try? Self.statusJSON(agent)["fleet"]?["degraded"]?.stringValue?.contains("cannot reach")) == true })

        try server.resume()
        #expect(agent.waitForLine(onStderr: true, timeout: 90) { $0.contains("fleet: agent late on") && $0.contains("joined") } != nil,
                "the agent joins when the database answers:\n\(agent.transcript)")
        // Its schedules begin: the leader fires, the run is claimed from the shared queue.
        #expect(await Self.wait(timeout: 60) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").count >= 2 },
                "a fleet schedule fires once joined:\n\(agent.transcript)")
        let joined = try HTTPProbe.request("GET", "/readyz", port: port, token: Self.token)
        let joinedFleet = try JSONValue.parse(Data(joined.body.utf8))["fleet"]
        #expect(joined.status == 200 && joinedFleet == "joined", "\(joined.body)")
        #expect(try Self.statusJSON(agent)["fleet"]?["joined"] == true)
        let lines = agent.stderrLines
        #expect(lines.filter { $0.contains("fleet: cannot reach") }.count == 1, "one line while degraded:\n\(agent.transcript)")
        #expect(lines.filter { $0.contains("fleet: agent late on") }.count == 1, "one line when it joins:\n\(agent.transcript)")
        #expect(!lines.contains { $0.contains("Connection creation failed") }, "postgres-nio's retries are at debug:\n\(agent.transcript)")
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func onEventOnAFleetTypeFiresOnAnAgentWithNoSubscribingProcess() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-trigger")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let log = folder + "/fired.log"
        let publisher = try AgentRun.fleetAgent("pub", database: database, folder: "fleet-trigger-pub", settings: #"""
            "enabled_modules": ["faults"], "processes": {"ticker": {"type": "fault", "tick_ms": 200, "event_type": "alert"}}
            """#, publish: ["alert"])
        defer { _ = publisher.stop() }
        let reactor = try AgentRun.fleetAgent("react", database: database, folder: "fleet-trigger-react", settings: #"""
            "enabled_modules": [], "processes": {},
            "tasks": {"react": {"type": "command", "shell": true, "command": "echo fired >> \#(log)",
                                "on_event": {"type": "fleet:alert"}}}
            """#)
        defer { _ = reactor.stop() }
        #expect(await Self.wait(timeout: 60) { ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("fired") },
                "the trigger fires with no process subscribing:\n\(reactor.transcript)")
        let status = try JSONValue.parse(Data(try reactor.control(["fleet", "status", "--json"]).stdout.utf8))
        #expect(status["events"]?["subscribed_types"]?.arrayValue?.contains("fleet:alert") == true, "\(status.serialized())")
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func scheduleListOnAnAgentThatDoesNotLeadShowsTheFleetsSchedulesAndTheLeader() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let settings = #"""
            "enabled_modules": [], "processes": {},
            "tasks": {"report": {"type": "command", "shell": true, "command": "true"}},
            "schedules": {"nightly": {"cron": "0 3 * * *", "timezone": "UTC", "run": {"task": "report"}},
                          "often": {"every": 2, "run": {"task": "report"}}}
            """#
        let leader = try AgentRun.fleetAgent("lead", database: database, folder: "fleet-list-lead", settings: settings)
        defer { _ = leader.stop() }
        #expect(await Self.wait { (try? Self.statusJSON(leader)["fleet"]?["leads_schedules"]) == true }, "\(leader.transcript)")
        let other = try AgentRun.fleetAgent("other", database: database, folder: "fleet-list-other", settings: settings)
        defer { _ = other.stop() }
        #expect(other.waitForLine(onStderr: true) { $0.contains("fleet: agent other on") } != nil, "\(other.transcript)")
        // The leader has fired "often" at least once: its last run is in the shared state.
        #expect(await Self.wait {
            let lines = (try? other.control(["schedule", "list", "--json"]).stdout) ?? ""
            return lines.contains("\"last_run\"")
        }, "\(other.transcript)")
        let listed = try other.control(["schedule", "list", "--json"]).stdout.split(separator: "\n").compactMap { try? JSONValue.parse(Data($0.utf8)) }
        #expect(listed.compactMap { $0["name"]?.stringValue } == ["nightly", "often"], "\(listed.map { $0.serialized() })")
        #expect(listed.allSatisfy { $0["leader"] == "lead" && $0["next_fire"]?.stringValue != nil }, "\(listed.map { $0.serialized() })")
        let human = try other.control(["schedule", "list"]).stdout
        #expect(human.contains("fleet: agent lead leads the schedules"), "\(human)")
        let history = try other.control(["schedule", "history", "often", "--json"])
        #expect(history.status == 0 && history.stdout.contains("\"fired\""), "\(history.stdout)\(history.stderr)")
    }
}
#endif
