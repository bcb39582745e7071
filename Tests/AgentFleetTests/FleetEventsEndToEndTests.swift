#if Fleet
import AgentFleet
import AgentTestSupport
import Foundation
import JSONSchema
import Logging
import Testing

/// Events across hosts with real agents (`agent-control console`) on one real PostgreSQL
/// database: two agents publish a type, a monitor of a third subscribes to `fleet:TYPE`; it
/// receives every event of each source in the order emitted, and after its agent is stopped
/// and started again, or killed and started again, it resumes where it got to: at least once,
/// nothing skipped. Types that are not published never reach the database.
@Suite(.ownThreads, .serialized) struct FleetEventsEndToEndTests {
    /// An agent of the fleet `database` running `processes` of the faults module.
    static func agent(_ id: String, database: String, processes: String, publish: [String] = [], directory: String) throws -> AgentRun {
        let server = try PostgresTestServer.require()
        let published = publish.map { "\"\($0)\"" }.joined(separator: ", ")
        let settings = #"""
            {"enabled_modules": ["faults"], "processes": \#(processes),
             "fleet": {"postgres": "\#(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\#(id)",
                       "heartbeat": 0.5, "poll": 0.5, "publish": [\#(published)]}}
            """#
        let run = try AgentRun(settings: settings, arguments: ["--no-build", "--json"],
                               environment: ["PGPASSWORD": PostgresTestServer.password], directory: directory)
        guard run.waitForLine(onStderr: true, { $0.contains("fleet: agent \(id) on") }) != nil else {
            _ = run.stop()
            throw HTTPProbe.Failure(description: "agent \(id) did not start:\n\(run.transcript)")
        }
        return run
    }

    static let sink = #"""
        {"sink": {"type": "slow_sink", "delay_ms": 0, "log_events": true, "log_source": true, "log_payload_prefix": 40,
                  "subscribe": ["fleet:alert"]}}
        """#

    /// A publisher: `ticker` emits `alert` (published) every 20 ms, `noise` emits `local_only` (not published).
    static let publisher = #"""
        {"ticker": {"type": "fault", "tick_ms": 20, "event_type": "alert"},
         "noise": {"type": "fault", "tick_ms": 20, "event_type": "local_only"}}
        """#

    /// The ticks the sink logged taking, by source, in the order taken.
    static func taken(_ agent: AgentRun) -> [String: [Int]] {
        var ticks: [String: [Int]] = [:]
        for line in agent.stderrLines {
            guard let range = line.range(of: #"\[sink\] took fleet:alert #\d+ from (\S+): \d+ bytes \{"tick":(\d+)\}"#, options: .regularExpression) else { continue }
            let match = String(line[range])
            let source = match.components(separatedBy: " from ")[1].components(separatedBy: ":")[0]
            guard let tick = Int(match.components(separatedBy: #""tick":"#)[1].dropLast()) else { continue }
            ticks[source, default: []].append(tick)
        }
        return ticks
    }

    static func wait(timeout: Double = 60, _ condition: () -> Bool) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if condition() { return true }
            Thread.sleep(forTimeInterval: 0.1)
        }
        return condition()
    }

    static let sources = ["host-a/ticker", "host-b/ticker"]

    /// Waits until the sink took at least `count` ticks of each source, and past `after`'s last.
    static func waitForTicks(_ agent: AgentRun, count: Int, after previous: [String: [Int]] = [:]) -> Bool {
        wait {
            let ticks = taken(agent)
            return sources.allSatisfy { source in
                let list = ticks[source] ?? []
                return list.count >= count && (list.last ?? 0) > (previous[source]?.last ?? 0) + count
            }
        }
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aMonitorOfAnotherAgentGetsEachSourcesEventsInOrderAndNoneIsSkippedAcrossItsAgentsRestarts() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let folder = TestPaths.temporaryDirectory("fleet-events")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        for name in ["a", "b", "c"] { try FileManager.default.createDirectory(atPath: folder + "/" + name, withIntermediateDirectories: true) }
        // The subscriber first: it receives from the publishers' first event on.
        var c = try Self.agent("host-c", database: database, processes: Self.sink, directory: folder + "/c")
        #expect(c.waitForLine(onStderr: true) { $0.contains("fleet: receiving fleet:alert after event 0") } != nil, "\(c.transcript)")
        let a = try Self.agent("host-a", database: database, processes: Self.publisher, publish: ["alert"], directory: folder + "/a")
        defer { _ = a.stop() }
        let b = try Self.agent("host-b", database: database, processes: Self.publisher, publish: ["alert"], directory: folder + "/b")
        defer { _ = b.stop() }

        var lives: [[String: [Int]]] = []
        #expect(Self.waitForTicks(c, count: 20), "the monitor did not receive from both publishers:\n\(c.transcript)")
        // Stopped while the publishers go on, then started again.
        _ = c.stop()
        try await Task.sleep(for: .seconds(1.5))
        lives.append(Self.taken(c))
        c = try Self.agent("host-c", database: database, processes: Self.sink, directory: folder + "/c")
        #expect(Self.waitForTicks(c, count: 20, after: lives[0]), "after a restart:\n\(c.transcript)")
        // Killed (its workers die with it), then started again.
        kill(c.process.processIdentifier, SIGKILL)
        _ = c.waitForExit(timeout: 10)
        try await Task.sleep(for: .seconds(1.5))
        lives.append(Self.taken(c))
        c = try Self.agent("host-c", database: database, processes: Self.sink, directory: folder + "/c")
        defer { _ = c.stop() }
        #expect(Self.waitForTicks(c, count: 20, after: lives[1]), "after kill -9 and a start:\n\(c.transcript)")
        lives.append(Self.taken(c))

        for source in Self.sources {
            for (index, life) in lives.enumerated() {
                let ticks = life[source] ?? []
                // In order, none skipped, within each life of the subscriber.
                #expect(!ticks.isEmpty && zip(ticks, ticks.dropFirst()).allSatisfy { $1 == $0 + 1 },
                        "life \(index + 1), \(source): \(ticks.prefix(3))…\(ticks.suffix(3)) (first break: \(String(describing: zip(ticks, ticks.dropFirst()).first { $1 != $0 + 1 })))")
            }
            #expect(lives[0][source]?.first == 1, "\(source): from the first event on")
            // Each life resumes at or before the next tick the one before took: again, never past.
            for index in 1..<lives.count {
                let resumed = lives[index][source]?.first ?? .max, last = lives[index - 1][source]?.last ?? 0
                #expect(resumed <= last + 1, "\(source): life \(index + 1) resumed at \(resumed) after \(last): events were skipped")
            }
        }

        // Only the published type reached the database.
        let reader = try await FleetEventStoreTests.connect(database, agent: "reader")
        #expect(try await reader.events.events(types: ["local_only"], after: 0, limit: 10).isEmpty, "an event not published went to the database")
        #expect(try await !reader.events.events(types: ["alert"], after: 0, limit: 10).isEmpty)
        await reader.shutDown()
        // `fleet status` tells of it.
        let status = try FleetEndToEndTests.fleetStatus(c)
        #expect(status["events"]?["subscribed_types"] == ["fleet:alert"], "\(status.serialized())")
        #expect((status["events"]?["received"]?.numberValue?.intValue ?? 0) > 0, "\(status.serialized())")
        let text = try runProgram("agent-control", ["fleet", "status", "--settings", c.settingsFile], timeout: 60)
        #expect(text.status == 0 && text.stdout.contains("events: publishes nothing (0 written, 0 waiting, 0 dropped); receives fleet:alert ("),
                "\(text.stdout)\(text.stderr)")
        let published = try FleetEndToEndTests.fleetStatus(a)["events"]
        #expect(published?["published_types"] == ["alert"] && (published?["published"]?.numberValue?.intValue ?? 0) > 0, "\(published?.serialized() ?? "")")
    }

    /// A row of the fleet's events written by other hands with a 50 MB payload reached a
    /// subscriber's store and memory: one larger than the subscriber's `max_payload_bytes` is
    /// skipped, said in the log, and the events after it are delivered.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func anEventOfTheFleetLargerThanTheSubscribersLimitIsSkippedSayingSo() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let subscriber = try Self.agent("sub", database: database, processes: Self.sink, directory: TestPaths.temporaryDirectory("fleet-oversize"))
        defer { _ = subscriber.stop() }
        func insert(_ payload: String) throws {
            try server.sql(database: database, """
                INSERT INTO fleet_events (agent_id, source, type, time, published, payload)
                VALUES ('rogue', 'hand', 'alert', 0, extract(epoch from now()), \(payload))
                """)
        }
        // The subscriber reads from where it joined: a first event shows it reads.
        #expect(Self.wait {
            try? insert(#"'{"tick":0}'"#)
            return Self.wait(timeout: 2) { Self.taken(subscriber)["rogue/hand"]?.contains(0) == true }
        }, "\(subscriber.transcript)")
        try insert(#"'{"x":"' || repeat('y', 100000) || '"}'"#)
        try insert(#"'{"tick":1}'"#)
        #expect(Self.wait { Self.taken(subscriber)["rogue/hand"]?.contains(1) == true }, "the event after it is delivered\n\(subscriber.transcript)")
        #expect(subscriber.stderrLines.contains { $0.contains("has a payload of 100008 bytes, more than this agent's events.max_payload_bytes (65536): skipped") },
                "\(subscriber.transcript)")
        #expect(!subscriber.stderrLines.contains { $0.contains("[sink] took fleet:alert") && $0.contains("yyyy") }, "\(subscriber.transcript)")
        let status = try JSONValue.parse(Data(try subscriber.control(["fleet", "status", "--json"]).stdout.utf8))
        #expect(status["events"]?["skipped"] == 1, "\(status["events"]?.serialized() ?? "")")
    }
}
#endif
