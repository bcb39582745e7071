import AgentTestSupport
import Foundation
import Testing

/// `"replicas": N` against a real detached agent: N workers `NAME#1 … NAME#N`, each its own OS
/// process with its own restart state; reloads that start or stop only the difference; process
/// commands and logs by the process's name or one replica's; a monitor's events spread.
@Suite(.ownThreads, .serialized) struct ReplicaTests {
    typealias Agent = DaemonTests.Agent

    static func feed(replicas: Int?, interval: Double = 0.2, extra: String = "") -> String {
        let key = replicas.map { #", "replicas": \#($0)"# } ?? ""
        return #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": \#(interval)\#(key)\#(extra)}}}"#
    }

    static func pid(_ status: [String: [String: Any]], _ name: String) -> Int32? {
        (status[name]?["pid"] as? Int).map { Int32($0) }
    }

    static func allRunning(_ names: [String]) -> ([String: [String: Any]]) -> Bool {
        { status in names.allSatisfy { status[$0]?["state"] as? String == "running" } }
    }

    static func names(_ count: Int) -> [String] { (1...count).map { "trades#\($0)" } }

    /// Waits until every pid is gone (a zombie counts as gone: PID 1 here does not reap).
    static func waitUntilGone(_ pids: [Int32], timeout: Double = 30) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while pids.contains(where: AgentRun.isAlive), Date() < deadline { Thread.sleep(forTimeInterval: 0.05) }
        return !pids.contains(where: AgentRun.isAlive)
    }

    @Test func replicasAreWorkersOfTheirOwnAndAKilledOneRestartsAlone() throws {
        let agent = try Agent(#"""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.2, "replicas": 3},
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 100000}}}
        """#)
        let started = try agent.control(["start", "--no-build"])
        try #require(started.status == 0, "\(started.stderr)")
        var status = try agent.waitUntil(Self.allRunning(Self.names(3) + ["busy"]))
        #expect(Set(status.keys) == Set(Self.names(3) + ["busy"]), "\(status.keys)")
        let pids = Self.names(3).compactMap { Self.pid(status, $0) }
        #expect(pids.count == 3 && Set(pids).count == 3, "\(pids)")
        #expect(pids.allSatisfy(AgentRun.isAlive))
        for (index, name) in Self.names(3).enumerated() {
            #expect(status[name]?["replica_of"] as? String == "trades")
            #expect(status[name]?["replica"] as? Int == index + 1)
        }
        // A process without replicas keeps its plain name and says nothing of replicas.
        #expect(status["busy"]?["replica_of"] == nil)
        let table = try agent.control(["status"])
        #expect(table.stdout.contains("trades#2"), "\(table.stdout)")

        kill(pids[1], SIGKILL)
        status = try agent.waitUntil { status in
            status["trades#2"]?["state"] as? String == "running" && Self.pid(status, "trades#2") != pids[1]
        }
        #expect(status["trades#2"]?["restarts"] as? Int == 1, "\(status["trades#2"] ?? [:])")
        #expect(Self.pid(status, "trades#2") != pids[1])
        for index in [0, 2] {
            #expect(Self.pid(status, Self.names(3)[index]) == pids[index])
            #expect(status[Self.names(3)[index]]?["restarts"] as? Int == 0)
        }
        // The run history of the process is its replicas'.
        let deadline = Date().addingTimeInterval(20)
        var history = try agent.control(["history", "trades", "--limit", "1000"])
        while !history.stdout.contains("trades#2  exit pid \(pids[1])"), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            history = try agent.control(["history", "trades", "--limit", "1000"])
        }
        #expect(history.stdout.contains("trades#1  started"), "\(history.stdout)")
        #expect(history.stdout.contains("trades#2  exit pid \(pids[1])"), "\(history.stdout)")
        #expect(!history.stdout.contains("busy"))
    }

    @Test func aReloadChangingTheCountStartsOrStopsOnlyTheDifference() throws {
        let agent = try Agent(Self.feed(replicas: 3))
        try #require(try agent.control(["start", "--no-build"]).status == 0)
        var status = try agent.waitUntil(Self.allRunning(Self.names(3)))
        let first = Self.names(3).compactMap { Self.pid(status, $0) }
        try #require(first.count == 3)

        try agent.write(Self.feed(replicas: 5))
        var reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("kept: trades#1, trades#2, trades#3; restarted: -; started: trades#4, trades#5; stopped: -"),
                "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil(Self.allRunning(Self.names(5)))
        #expect(Self.names(3).compactMap { Self.pid(status, $0) } == first)
        let five = Self.names(5).compactMap { Self.pid(status, $0) }
        try #require(five.count == 5)

        // The highest-numbered go; the others keep running, same pids.
        try agent.write(Self.feed(replicas: 2))
        reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("kept: trades#1, trades#2; restarted: -; started: -; stopped: trades#3, trades#4, trades#5"),
                "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil { $0.count == 2 }
        #expect(Set(status.keys) == Set(Self.names(2)))
        #expect(Self.names(2).compactMap { Self.pid(status, $0) } == Array(first.prefix(2)))
        #expect(Self.waitUntilGone(Array(five.suffix(3))), "the stopped replicas' workers are still alive")
        #expect(first.prefix(2).allSatisfy(AgentRun.isAlive))

        // A change of the process's settings restarts every replica.
        try agent.write(Self.feed(replicas: 2, interval: 0.3))
        reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("kept: -; restarted: trades#1, trades#2; started: -; stopped: -"), "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil { status in
            Self.allRunning(Self.names(2))(status) && Self.names(2).enumerated().allSatisfy { Self.pid(status, $1) != first[$0] }
        }
        #expect(Self.allRunning(Self.names(2))(status), "\(status)")

        // Without the key the process is one worker of the plain name again.
        try agent.write(Self.feed(replicas: nil, interval: 0.3))
        reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("kept: -; restarted: -; started: trades; stopped: trades#1, trades#2"), "\(reloaded.stdout)\(reloaded.stderr)")

        // Disabled: every replica stops, and the process is listed once, disabled.
        try agent.write(Self.feed(replicas: 4))
        try #require(try agent.control(["reload"]).status == 0)
        status = try agent.waitUntil(Self.allRunning(Self.names(4)))
        let four = Self.names(4).compactMap { Self.pid(status, $0) }
        try agent.write(Self.feed(replicas: 4, extra: #", "enabled": false"#))
        reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("stopped: trades#1, trades#2, trades#3, trades#4"), "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil { $0.count == 1 }
        #expect(status["trades"]?["state"] as? String == "disabled", "\(status)")
        #expect(Self.waitUntilGone(four))
    }

    @Test func processCommandsAndLogsTakeTheProcessOrOneReplica() throws {
        let agent = try Agent(Self.feed(replicas: 2))
        try #require(try agent.control(["start", "--no-build"]).status == 0)
        var status = try agent.waitUntil(Self.allRunning(Self.names(2)))
        let first = Self.names(2).compactMap { Self.pid(status, $0) }
        try #require(first.count == 2)

        // One replica by its name.
        let stopOne = try agent.control(["process", "stop", "trades#2"])
        #expect(stopOne.status == 0, "\(stopOne.stderr)")
        status = try agent.waitUntil { $0["trades#2"]?["state"] as? String == "stopped" }
        #expect(status["trades#2"]?["state"] as? String == "stopped")
        #expect(Self.pid(status, "trades#1") == first[0])

        // The process's name: every replica; start starts the ones that have no worker.
        let start = try agent.control(["process", "start", "trades"])
        #expect(start.status == 0, "\(start.stderr)")
        #expect(start.stdout.contains("trades: start requested for its 2 replicas"), "\(start.stdout)")
        status = try agent.waitUntil(Self.allRunning(Self.names(2)))
        #expect(Self.pid(status, "trades#1") == first[0])
        let second = try #require(Self.pid(status, "trades#2"))
        let again = try agent.control(["process", "start", "trades"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("all 2 replicas of trades are already running"), "\(again.stderr)")

        let restart = try agent.control(["process", "restart", "trades"])
        #expect(restart.status == 0, "\(restart.stderr)")
        status = try agent.waitUntil { status in
            Self.allRunning(Self.names(2))(status) && Self.pid(status, "trades#1") != first[0] && Self.pid(status, "trades#2") != second
        }
        #expect(Self.pid(status, "trades#1") != first[0] && Self.pid(status, "trades#2") != second, "\(status)")
        let third = Self.names(2).compactMap { Self.pid(status, $0) }

        // logs NAME: every replica's lines interleaved, each naming its replica; NAME#2: its own.
        let all = try agent.control(["logs", "trades"])
        #expect(all.status == 0, "\(all.stderr)")
        for (name, pid) in zip(Self.names(2), third) {
            #expect(all.stdout.split(separator: "\n").contains { $0.contains(" \(name) supervisor ") && $0.contains("started worker pid \(pid)") }, "\(all.stdout)")
        }
        let one = try agent.control(["logs", "trades#2", "--json"])
        #expect(one.status == 0, "\(one.stderr)")
        #expect(one.stdout.contains("started worker pid \(third[1])"), "\(one.stdout)")
        #expect(!one.stdout.contains("started worker pid \(third[0])"), "\(one.stdout)")
        let lines = all.stdout.split(separator: "\n").count
        #expect(lines >= one.stdout.split(separator: "\n").count)

        let unknown = try agent.control(["process", "stop", "trades#3"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no process named \"trades#3\""), "\(unknown.stderr)")

        #expect(try agent.control(["process", "stop", "trades"]).status == 0)
        status = try agent.waitUntil { status in Self.names(2).allSatisfy { status[$0]?["state"] as? String == "stopped" } }
        #expect(Self.names(2).allSatisfy { status[$0]?["state"] as? String == "stopped" }, "\(status)")
        #expect(Self.waitUntilGone(third))
    }

    @Test func aMonitorsEventsAreSpreadSoThatEachGoesToOneReplica() throws {
        let agent = try Agent(#"""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.005},
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 1000000, "replicas": 2}}}
        """#)
        try #require(try agent.control(["start", "--no-build"]).status == 0)
        let before = try agent.waitUntil(Self.allRunning(["trades", "busy#1", "busy#2"]))
        try #require(Self.allRunning(["trades", "busy#1", "busy#2"])(before))
        func count(_ status: [String: [String: Any]], _ name: String, _ key: String) -> Int { status[name]?[key] as? Int ?? 0 }
        _ = try agent.waitUntil { count($0, "trades", "events_emitted") >= count(before, "trades", "events_emitted") + 200 }
        #expect(try agent.control(["process", "stop", "trades"]).status == 0)
        let after = try agent.waitUntil { $0["trades"]?["state"] as? String == "stopped" }
        let emitted = count(after, "trades", "events_emitted") - count(before, "trades", "events_emitted")
        let one = count(after, "busy#1", "events_delivered") - count(before, "busy#1", "events_delivered")
        let two = count(after, "busy#2", "events_delivered") - count(before, "busy#2", "events_delivered")
        #expect(emitted >= 200)
        // Every event to exactly one replica, taking turns.
        #expect(one + two == emitted, "busy#1 \(one) + busy#2 \(two) != \(emitted) emitted")
        #expect(abs(one - two) <= 1, "busy#1 \(one), busy#2 \(two)")
    }

    @Test func badReplicaValuesAreErrorsAtTheirPointer() throws {
        let directory = TestPaths.temporaryDirectory("replicas")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let file = directory + "/settings.json"
        try #"""
        {"enabled_modules": ["sample"], "processes": {
          "zero": {"type": "trade_feed", "replicas": 0},
          "huge": {"type": "trade_feed", "replicas": 1e30},
          "many": {"type": "trade_feed", "replicas": 1001},
          "half": {"type": "trade_feed", "replicas": 2.5},
          "text": {"type": "trade_feed", "replicas": "3"},
          "negative": {"type": "trade_frequency", "replicas": -1},
          "chat": {"type": "chatbot", "logic_adapters": ["status"], "replicas": 2},
          "fine": {"type": "trade_feed", "replicas": 1000}}}
        """#.write(toFile: file, atomically: true, encoding: .utf8)
        let report = try runProgram("validate-settings", ["--settings", file])
        #expect(report.status == 2, "\(report.stdout)\(report.stderr)")
        for (name, found) in [("zero", "expected an integer ≥ 1, found 0"), ("huge", "expected an integer ≤ 1000"), ("many", "expected an integer ≤ 1000, found 1001"), ("half", "integer"),
                              ("text", "integer"), ("negative", "≥ 1"), ("chat", "one worker answers the chat")] {
            let line = report.stdout.split(separator: "\n").first { $0.contains("/processes/\(name)/replicas:") }
            #expect(line?.contains(found) == true, "\(name): \(line ?? "no error at /processes/\(name)/replicas")\n\(report.stdout)")
        }
        #expect(!report.stdout.contains("/processes/fine/"), "\(report.stdout)")

        // The running agent refuses them the same way, with everything running kept.
        let agent = try Agent(Self.feed(replicas: 2))
        try #require(try agent.control(["start", "--no-build"]).status == 0)
        let status = try agent.waitUntil(Self.allRunning(Self.names(2)))
        try agent.write(Self.feed(replicas: 1_000_000))
        let refused = try agent.control(["reload"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("/processes/trades/replicas: expected an integer ≤ 1000, found 1000000"), "\(refused.stderr)")
        let kept = try agent.status()
        #expect(Self.names(2).compactMap { Self.pid(kept, $0) } == Self.names(2).compactMap { Self.pid(status, $0) })
    }

    @Test func theHTTPStatusTheDashboardAndTheMetricsShowEachReplica() throws {
        let agent = try APIAgent(http: try HTTPSession.users(), processes: #"{"trades": {"type": "trade_feed", "interval": 0.2, "replicas": 2}}"#)
        let admin = APIAgent.bearer(APIAgent.adminToken)
        func processes() throws -> [String: [String: Any]] {
            let list = try agent.request("GET", "/api/status", headers: admin).json?["processes"] as? [[String: Any]] ?? []
            return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        }
        let deadline = Date().addingTimeInterval(45)
        var status = try processes()
        while !Self.allRunning(Self.names(2))(status), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.1)
            status = try processes()
        }
        #expect(Set(status.keys) == Set(Self.names(2)), "\(status)")
        #expect(status["trades#2"]?["replica_of"] as? String == "trades" && status["trades#2"]?["replica"] as? Int == 2, "\(status)")

        // /metrics: the process's name and the replica's number as labels.
        let metrics = try PrometheusExposition(try agent.request("GET", "/metrics", headers: admin).body)
        for replica in ["1", "2"] {
            #expect(metrics.value("agent_process_state", ["process": "trades", "replica": replica, "state": "running"]) == 1, "\(metrics.families["agent_process_state"]?.samples ?? [])")
        }
        #expect(metrics.families["agent_process_state"]?.samples.allSatisfy { $0.labels["process"] == "trades" } == true)

        // The dashboard lists each replica, linked by its escaped name, and shows one's page.
        let (cookie, _, _) = try HTTPSession.login(agent)
        let page = try agent.request("GET", "/", headers: ["Cookie": cookie])
        #expect(page.status == 200 && page.body.contains("trades#1") && page.body.contains("/processes/trades%232"), "\(page.body)")
        let replicaPage = try agent.request("GET", "/processes/trades%232", headers: ["Cookie": cookie])
        #expect(replicaPage.status == 200, "\(replicaPage.description)")
        #expect(replicaPage.body.contains("started worker pid \(status["trades#2"]?["pid"] as? Int ?? -1)"), "\(replicaPage.body)")
        #expect(replicaPage.body.contains("&quot;replicas&quot;: 2") || replicaPage.body.contains("\"replicas\": 2"), "the replica's page does not show its process's settings")

        // The process command over HTTP: one replica by its escaped name, or all of them.
        let one = try agent.request("POST", "/api/processes/trades%232/restart", headers: admin)
        #expect(one.status == 200, "\(one.description)")
        #expect((one.json?["process"] as? [String: Any])?["name"] as? String == "trades#2", "\(one.description)")
        let all = try agent.request("POST", "/api/processes/trades/stop", headers: admin)
        #expect(all.status == 200, "\(all.description)")
        #expect((all.json?["processes"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == Self.names(2), "\(all.description)")
    }
}
