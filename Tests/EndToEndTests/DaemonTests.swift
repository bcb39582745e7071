import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// `agent-control start|status|reload|process|stop` against a real detached agent.
@Suite(.ownThreads, .serialized) struct DaemonTests {
    final class Agent {
        let directory: String
        var settings: String { directory + "/settings.json" }
        var extra: [String] = []

        init(_ settings: String, runDirectory: String? = nil) throws {
            directory = TestPaths.temporaryDirectory("daemon")
            try settings.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
            if let runDirectory { extra = ["--run-dir", runDirectory] }
        }

        deinit { _ = try? control(["stop", "--timeout", "20"]) }

        func write(_ settings: String) throws { try settings.write(toFile: self.settings, atomically: true, encoding: .utf8) }

        @discardableResult
        func control(_ arguments: [String]) throws -> ProgramResult {
            let command = arguments[0] == "process" ? Array(arguments.prefix(3)) : [arguments[0]]
            return try runProgram("agent-control", command + ["--settings", settings] + extra + arguments.dropFirst(command.count))
        }

        func status() throws -> [String: [String: Any]] {
            let result = try control(["status", "--json"])
            let object = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
            let list = object?["processes"] as? [[String: Any]] ?? []
            return Dictionary(list.map { ($0["name"] as? String ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        }

        func waitUntil(timeout: Double = 45, _ condition: ([String: [String: Any]]) -> Bool) throws -> [String: [String: Any]] {
            let deadline = Date().addingTimeInterval(timeout)
            var last = try status()
            while !condition(last), Date() < deadline {
                Thread.sleep(forTimeInterval: 0.05)
                last = try status()
            }
            return last
        }

        var log: String { (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? "" }
    }

    static let twoProcesses = """
    {"enabled_modules": ["sample"], "processes": {
      "trades": {"type": "trade_feed", "interval": 0.05},
      "busy": {"type": "trade_frequency", "window": 5, "threshold": 100}}}
    """

    /// A folder given for --settings is refused by every command, saying what to pass: `stop`
    /// said "not running" of a running agent, `start` made .agent in the folder's parent.
    @Test func aFolderGivenForTheSettingsIsRefusedAndNothingIsWritten() throws {
        let parent = TestPaths.temporaryDirectory("daemon-folder")
        let folder = parent + "/agent"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try Self.twoProcesses.write(toFile: folder + "/settings.json", atomically: true, encoding: .utf8)
        for command in ["start", "stop", "status", "reload", "validate"] {
            let result = try runProgram("agent-control", [command, "--settings", folder])
            #expect(result.status == 2, "\(command): \(result.status) \(result.stdout)\(result.stderr)")
            #expect(result.stderr.contains("expected a settings file (a regular file of JSON), found a folder") && result.stderr.contains(folder + "/settings.json"), "\(command): \(result.stderr)")
        }
        #expect(!FileManager.default.fileExists(atPath: parent + "/.agent"), "start wrote into the folder's parent")
        #expect(!FileManager.default.fileExists(atPath: folder + "/.agent"))
        for timeout in ["nan", "0", "-1", "inf"] {
            let result = try runProgram("agent-control", ["stop", "--settings", folder + "/settings.json", "--timeout=" + timeout])
            #expect(result.status == 64 && result.stderr.contains("--timeout must be a number of seconds > 0"), "\(timeout): \(result.stderr)")
        }
    }

    @Test func startStatusReloadAndStop() throws {
        let agent = try Agent(Self.twoProcesses)
        let started = try agent.control(["start", "--no-build"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(started.stdout.hasPrefix("started: pid "))
        #expect(FileManager.default.fileExists(atPath: agent.directory + "/.agent/run/agent.pid"))
        let socket = agent.directory + "/.agent/run/control.sock"
        var info = stat()
        #expect(stat(socket, &info) == 0 && info.st_mode & 0o777 == 0o600)

        var status = try agent.waitUntil { $0["trades"]?["state"] as? String == "running" && $0["busy"]?["state"] as? String == "running" }
        let tradesPID = status["trades"]?["pid"] as? Int
        let busyPID = status["busy"]?["pid"] as? Int
        #expect(tradesPID != nil && busyPID != nil)

        let table = try agent.control(["status"])
        #expect(table.stdout.contains("NAME"))
        #expect(table.stdout.contains("trades  trade_feed (sample)"))

        // A second start is refused.
        let again = try agent.control(["start", "--no-build"])
        #expect(again.status == 1)
        #expect(again.stderr.contains("already running"))

        // Reload with one process changed, one added: the unchanged one keeps its pid.
        try agent.write("""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.05},
          "busy": {"type": "trade_frequency", "window": 5, "threshold": 50},
          "more": {"type": "trade_feed", "pairs": ["X/Y"]}}}
        """)
        let reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("kept: trades; restarted: busy; started: more; stopped: -"), "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil { $0["busy"]?["state"] as? String == "running" && $0["more"]?["state"] as? String == "running" }
        #expect(status["trades"]?["pid"] as? Int == tradesPID)
        #expect(status["busy"]?["pid"] as? Int != busyPID)

        // An invalid reload is refused and everything keeps running.
        try agent.write(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": "fast"}}}"#)
        let refused = try agent.control(["reload"])
        #expect(refused.status == 2)
        #expect(refused.stderr.contains("reload refused; the running configuration stays"))
        #expect(refused.stderr.contains("/processes/trades/interval: expected a number ≥ 0.001, found \"fast\" (string)"))
        // As JSON: each error with its file and pointer, as settings_change lists them.
        let asJSON = try agent.control(["reload", "--json"])
        #expect(asJSON.status == 2, "\(asJSON.stdout)\(asJSON.stderr)")
        let refusal = try JSONSerialization.jsonObject(with: Data(asJSON.stdout.utf8)) as? [String: Any]
        #expect(refusal?["code"] as? String == "invalid", "\(asJSON.stdout)")
        let first = (refusal?["errors"] as? [[String: Any]])?.first
        #expect(first?["pointer"] as? String == "/processes/trades/interval" && (first?["file"] as? String)?.hasSuffix("settings.json") == true, "\(asJSON.stdout)")
        status = try agent.status()
        #expect(status.count == 3)
        #expect(status["trades"]?["pid"] as? Int == tradesPID)

        // Removing a process stops it; SIGHUP reloads too.
        try agent.write(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.05}}}"#)
        let pid = try #require(Int32(String(contentsOfFile: agent.directory + "/.agent/run/agent.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGHUP)
        status = try agent.waitUntil { $0.count == 1 }
        #expect(Array(status.keys) == ["trades"])
        #expect(status["trades"]?["pid"] as? Int == tradesPID)

        let stopped = try agent.control(["stop"])
        #expect(stopped.status == 0)
        #expect(stopped.stdout.contains("stopped (pid \(pid))"))
        #expect(!AgentRun.isAlive(Int32(tradesPID!)))
        #expect(!FileManager.default.fileExists(atPath: agent.directory + "/.agent/run/agent.pid"))
        #expect(agent.log.contains("stop requested over the control socket"))
        #expect(try agent.control(["status"]).status == 3)
    }

    @Test func disabledProcessesAreListedAsDisabledAtStartAndAfterAReload() throws {
        let agent = try Agent("""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.05},
          "off": {"type": "trade_frequency", "enabled": false}}}
        """)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        var status = try agent.waitUntil { $0["trades"]?["state"] as? String == "running" }
        #expect(status["off"]?["state"] as? String == "disabled", "\(status)")
        #expect(status["off"]?["type"] as? String == "trade_frequency")
        try agent.write("""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.05, "enabled": false},
          "off": {"type": "trade_frequency", "enabled": false}}}
        """)
        let reloaded = try agent.control(["reload"])
        #expect(reloaded.stdout.contains("stopped: trades"), "\(reloaded.stdout)\(reloaded.stderr)")
        status = try agent.waitUntil { $0["trades"]?["state"] as? String == "disabled" }
        #expect(status["trades"]?["state"] as? String == "disabled", "\(status)")
        #expect(status["trades"]?["module"] as? String == "sample")
        #expect(status["off"]?["state"] as? String == "disabled")
        let table = try agent.control(["status"])
        #expect(table.stdout.split(separator: "\n").contains { $0.hasPrefix("trades") && $0.contains("disabled") }, "\(table.stdout)")
        let start = try agent.control(["process", "start", "trades"])
        #expect(start.status != 0)
        #expect(start.stderr.contains("trades is disabled in the settings"), "\(start.stderr)")
    }

    @Test func processCommandsStopStartAndRestartOneProcess() throws {
        let agent = try Agent(#"{"enabled_modules": ["faults"], "processes": {"a": {"type": "fault"}, "crashy": {"type": "fault", "mode": "exit", "after_ms": 10, "restart": {"initial_delay": 0.01, "max_restarts": 2}}}}"#)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        var status = try agent.waitUntil { $0["a"]?["state"] as? String == "running" && $0["crashy"]?["state"] as? String == "failed" }
        #expect((status["crashy"]?["reason"] as? String)?.contains("the start limit") == true)
        let firstPID = status["a"]?["pid"] as? Int

        #expect(try agent.control(["process", "stop", "a"]).status == 0)
        status = try agent.waitUntil { $0["a"]?["state"] as? String == "stopped" }
        #expect(status["a"]?["pid"] == nil)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(try agent.status()["a"]?["state"] as? String == "stopped")

        #expect(try agent.control(["process", "start", "a"]).status == 0)
        status = try agent.waitUntil { $0["a"]?["state"] as? String == "running" }
        let secondPID = status["a"]?["pid"] as? Int
        #expect(secondPID != nil && secondPID != firstPID)

        #expect(try agent.control(["process", "restart", "a"]).status == 0)
        status = try agent.waitUntil { $0["a"]?["state"] as? String == "running" && $0["a"]?["pid"] as? Int != secondPID }
        #expect(status["a"]?["pid"] as? Int != secondPID)

        // A failed process can be started again.
        #expect(try agent.control(["process", "start", "crashy"]).status == 0)
        #expect(agent.log.contains("[crashy] start requested over the control socket"))

        let unknown = try agent.control(["process", "stop", "crahsy"])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no process named \"crahsy\"; did you mean \"crashy\"?"))
        let running = try agent.control(["process", "start", "a"])
        #expect(running.stderr.contains("a is already running"))
        #expect(try agent.control(["stop"]).status == 0)
    }

    @Test func killedAgentLeavesNothingThatBlocksTheNextStart() throws {
        let agent = try Agent(Self.twoProcesses)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        let status = try agent.waitUntil { $0.values.allSatisfy { $0["state"] as? String == "running" } && $0.count == 2 }
        let workers = status.values.compactMap { $0["pid"] as? Int }.map(Int32.init)
        let pid = try #require(Int32(String(contentsOfFile: agent.directory + "/.agent/run/agent.pid", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        kill(pid, SIGKILL)
        let deadline = Date().addingTimeInterval(20)
        while (workers + [pid]).contains(where: AgentRun.isAlive), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!(workers + [pid]).contains(where: AgentRun.isAlive), "a worker outlived the killed supervisor")
        // The pidfile and the socket are still there, stale.
        #expect(FileManager.default.fileExists(atPath: agent.directory + "/.agent/run/agent.pid"))
        // A zombie leader is not a dead process: its other threads may still be exiting (a CI run
        // restarted while one held the pidfile's lock, and was told the agent still ran).
        let unlocked = Date().addingTimeInterval(20)
        while Pidfile.holder(of: agent.directory + "/.agent/run/agent.pid") != nil, Date() < unlocked { Thread.sleep(forTimeInterval: 0.02) }
        let restarted = try agent.control(["start", "--no-build"])
        #expect(restarted.status == 0, "\(restarted.stderr)")
        #expect(try agent.waitUntil { $0.count == 2 && $0.values.allSatisfy { $0["state"] as? String == "running" } }.count == 2)
        #expect(try agent.control(["stop"]).status == 0)
    }

    /// `stop` trusted the pidfile alone: one removed by hand said "not running" while the agent
    /// ran on. The agent answering on the run folder's socket is stopped now, and waited for.
    @Test func stopFindsTheAgentOnItsSocketWhenItsPidfileWasRemoved() throws {
        let agent = try Agent(Self.twoProcesses)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        let pidfile = agent.directory + "/.agent/run/agent.pid"
        let pid = try #require(Int32(String(contentsOfFile: pidfile, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        try FileManager.default.removeItem(atPath: pidfile)
        let stopped = try agent.control(["stop"])
        #expect(stopped.status == 0, "\(stopped)")
        #expect(stopped.stdout.contains("but pid \(pid) answers on") && stopped.stdout.contains("stopped (pid \(pid))"), "\(stopped)")
        #expect(!AgentRun.isAlive(pid), "the agent still runs after its stop")
        #expect(try agent.control(["stop"]).stdout.contains("not running"))
    }

    /// `restart` (its stop) with AGENT_PIDFILE naming another agent's pidfile stopped that
    /// other agent when this one was not running. A pidfile's pid is this agent's only when
    /// that process holds this run folder.
    @Test func stopLeavesAnotherAgentNamedByTheGivenPidfileAlone() throws {
        let mine = try Agent(Self.twoProcesses), other = try Agent(Self.twoProcesses)
        #expect(try other.control(["start", "--no-build"]).status == 0)
        let otherPidfile = other.directory + "/.agent/run/agent.pid"
        let otherPID = try #require(Pidfile.holder(of: otherPidfile))
        mine.extra = ["--pidfile", otherPidfile]
        let stopped = try mine.control(["stop"])
        #expect(stopped.status == 1 && stopped.stderr.contains("names pid \(otherPID), which is not the agent of") && stopped.stderr.contains("nothing was signalled"), "\(stopped)")
        let restarted = try mine.control(["restart", "--no-build"])
        #expect(restarted.status == 1 && !restarted.stdout.contains("started"), "\(restarted)")
        #expect(AgentRun.isAlive(otherPID), "the other agent was stopped")
        #expect(try other.control(["stop"]).status == 0)
    }

    @Test func socketPathLongerThanTheUnixLimitWorks() throws {
        var deep = TestPaths.temporaryDirectory("long")
        while deep.utf8.count < 150 { deep += "/a-rather-long-folder-name" }
        let agent = try Agent(Self.twoProcesses, runDirectory: deep)
        #expect((deep + "/control.sock").utf8.count > 108)
        let started = try agent.control(["start", "--no-build"])
        #expect(started.status == 0, "\(started.stderr)")
        #expect(try agent.waitUntil { $0.count == 2 }.count == 2)
        #expect(try agent.control(["stop"]).status == 0)
    }

    @Test func startThatFailsShowsTheAgentsLog() throws {
        let agent = try Agent(#"{"enabled_modules": ["sample"], "processes": {"t": {"type": "trade_fed"}}}"#)
        let started = try agent.control(["start", "--no-build"])
        // The agent's own status: invalid settings are 2, as for console.
        #expect(started.status == 2)
        #expect(started.stderr.contains("unknown process type \"trade_fed\"; did you mean \"trade_feed\"?"))
        #expect(started.stderr.contains("the agent did not start (exit status 2)"))
        #expect(try agent.control(["stop"]).stdout.contains("not running"))
    }

    /// A process that a reload changed waits for its old worker to stop before it starts
    /// again: `status` showed it `stopped` with no pid while that worker still ran out its
    /// stop timeout. (15 s of it: a fresh-clone CI run saw 4 s pass between the reload and the
    /// next `status` on a loaded machine.)
    @Test func aProcessWaitingForItsOldWorkerAfterAReloadIsShownStoppingWithThatWorker() throws {
        func settings(mode: String) -> String {
            #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"slow": {"type": "fault", "mode": "\#(mode)", "stop_timeout": 15}}}"#
        }
        let agent = try Agent(settings(mode: "ignore_stop"))
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        let running = try agent.waitUntil { $0["slow"]?["state"] as? String == "running" }
        let old = try #require(running["slow"]?["pid"] as? Int)

        // The new worker stops when asked, so that the test's own stop is quick.
        try agent.write(settings(mode: "healthy"))
        #expect(try agent.control(["reload"]).stdout.contains("restarted: slow"))
        let waiting = try agent.status()["slow"]
        #expect(waiting?["state"] as? String == "stopping", "\(waiting ?? [:])")
        #expect(waiting?["pid"] as? Int == old, "\(waiting ?? [:])")
        #expect(waiting?["restarting"] as? Bool == true, "\(waiting ?? [:])")
        #expect(try agent.control(["status"]).stdout.contains("stopping"))

        // After the stop timeout the old worker is killed and the new one runs.
        let replaced = try agent.waitUntil(timeout: 60) { ($0["slow"]?["pid"] as? Int).map { $0 != old } == true && $0["slow"]?["state"] as? String == "running" }
        #expect(replaced["slow"]?["restarting"] == nil, "\(replaced)")
        #expect(try agent.control(["stop"]).status == 0)
    }

    /// Outputs, the store and the fleet are opened at the start; a reload that changed them
    /// answered "reloaded" and silently went on with the old ones.
    @Test func reloadThatChangesOutputsTheStoreOrTheFleetSaysTheyTakeEffectAtTheNextStart() throws {
        let agent = try Agent(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.05}}}"#)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        #expect(try agent.waitUntil { $0["trades"]?["state"] as? String == "running" }.count == 1)

        // Only a process changes: nothing to say.
        try agent.write(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.1}}}"#)
        let plain = try agent.control(["reload"])
        #expect(plain.status == 0 && !plain.stdout.contains("note:"), "\(plain.stdout)\(plain.stderr)")

        try agent.write("""
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": 0.1}},
         "outputs": [{"type": "file", "path": "events.jsonl"}], "store": {"retention": {"max_events": 1000}},
         "fleet": {"postgres": "postgres://agent@127.0.0.1:9/agents", "agent_id": "host-a", "publish": ["trade"]}}
        """)
        let reloaded = try agent.control(["reload"])
        #expect(reloaded.status == 0)
        #expect(reloaded.stdout.contains("kept: trades"), "\(reloaded.stdout)")
        #expect(reloaded.stdout.contains("note: /outputs changed: it takes effect at the next start (`agent-control restart`)"), "\(reloaded.stdout)")
        #expect(reloaded.stdout.contains("note: /store changed: it takes effect at the next start"), "\(reloaded.stdout)")
        #expect(reloaded.stdout.contains("note: /fleet changed: it takes effect at the next start (`agent-control restart`); the running agent keeps the fleet settings it started with (or none)"), "\(reloaded.stdout)")
        #expect(agent.log.contains("reload: /outputs changed"))
        #expect(try agent.control(["stop"]).status == 0)
    }

    /// Two process names equal under Swift's canonical equivalence ("\u{C5}", "\u{212B}") passed
    /// validation; a reload that replaced them killed the supervisor (an unowned reference to
    /// the process that the reload's name map had dropped).
    @Test func twoSpellingsOfOneProcessNameAreRefusedAtStartAndReloadAndTheAgentLives() throws {
        let both = try Agent(#"{"enabled_modules": ["sample"], "processes": {"\u00c5": {"type": "trade_feed"}, "\u212b": {"type": "trade_feed"}}}"#)
        let refused = try both.control(["start", "--no-build"])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("is not in composed Unicode form (NFC)"), "\(refused.stderr)")

        let agent = try Agent(#"{"enabled_modules": ["sample"], "processes": {"\u00c5": {"type": "trade_feed", "interval": 0.05}}}"#)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        #expect(try agent.waitUntil { $0.count == 1 && $0.values.allSatisfy { $0["state"] as? String == "running" } }.count == 1)
        try agent.write(#"{"enabled_modules": ["sample"], "processes": {"\u00c5": {"type": "trade_feed", "interval": 0.1}, "\u212b": {"type": "trade_feed"}}}"#)
        let reloaded = try agent.control(["reload"])
        #expect(reloaded.status == 2, "\(reloaded.stdout)\(reloaded.stderr)")
        #expect(reloaded.stderr.contains("is not in composed Unicode form (NFC)"), "\(reloaded.stderr)")
        Thread.sleep(forTimeInterval: 0.5)
        let status = try agent.control(["status", "--json"])
        #expect(status.status == 0, "the agent died:\n\(agent.log.suffix(2000))")
        #expect(try agent.control(["stop"]).status == 0)
    }
}
