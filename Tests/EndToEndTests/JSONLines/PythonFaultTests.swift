import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Python programs that crash, hang, flood, write garbage, never say ready or refuse their
/// settings, in the real agent: each is handled as its settings say, a well-behaved Python
/// process beside it goes on, nothing it was given is lost, and the supervisor still answers.
@Suite(.ownThreads) struct PythonFaultTests {
    /// `status --json`'s entry for `process`.
    private func status(_ agent: AgentRun, _ process: String) -> JSONValue? {
        guard let answer = try? runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]), answer.status == 0,
              let value = try? JSONValue.parse(answer.stdout) else { return nil }
        return value["processes"]?.arrayValue?.first { $0["name"]?.stringValue == process }
    }

    private func readings(_ agent: AgentRun, from source: String) -> Int {
        JSONLinesFixture.events(agent, type: "py_reading").filter { $0["source"] as? String == source }.count
    }

    /// The healthy neighbour still emits and the supervisor still answers.
    private func expectUnharmed(_ agent: AgentRun, _ comment: Comment? = nil) {
        let before = readings(agent, from: "steady")
        #expect(JSONLinesFixture.wait { readings(agent, from: "steady") > before + 3 ? true : nil } != nil, "\(agent.transcript)")
        #expect(status(agent, "steady")?["state"] == "running", "\(agent.transcript)")
    }

    private let steady = #""steady": {"type": "py_source", "interval": 0.02}"#

    @Test func aCrashingProgramIsRestartedAsItsPolicySaysAndFailsAtTheStartLimitWithItsReason() throws {
        let agent = try JSONLinesFixture.start(steady + #"""
            , "crashy": {"type": "py_fault", "mode": "crash", "after": 0.05, "restart": {"initial_delay": 0.05, "max_restarts": 2, "within": 600}}
            """#, label: "py-crash")
        let failed = agent.waitForLine(onStderr: true) { $0.contains("[crashy]") && $0.contains("the start limit") }
        #expect(failed != nil, "\(agent.transcript)")
        #expect(JSONLinesFixture.events(agent, type: "py_fault_started").filter { $0["source"] as? String == "crashy" }.count == 3)
        #expect(agent.stderrLines.contains { $0.contains("[crashy]") && $0.contains("RuntimeError: crashing on purpose") }, "\(agent.transcript)")
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aHungProgramIsKilledByTheWatchdogButAnIdleOneIsNot() throws {
        let agent = try JSONLinesFixture.start(steady + #"""
            , "stuck": {"type": "py_fault", "mode": "hang", "after": 0.05, "watchdog": 1, "restart": {"initial_delay": 0.05, "max_restarts": null}},
            "idle": {"type": "py_watch", "subscribe": ["nothing_ever"], "watchdog": 1}
            """#, label: "py-hang")
        let killed = agent.waitForLine(onStderr: true) { $0.contains("[stuck]") && $0.contains("watchdog") && $0.contains("no heartbeat") }
        #expect(killed != nil, "\(agent.transcript)")
        // Restarted, and killed again: meanwhile the idle monitor, which gets no events at all,
        // keeps its heartbeats going (the SDK sends them while no handler is stuck).
        let restarted = JSONLinesFixture.wait { () -> Bool? in
            JSONLinesFixture.events(agent, type: "py_fault_started").filter { $0["source"] as? String == "stuck" }.count >= 3 ? true : nil
        }
        #expect(restarted != nil, "\(agent.transcript)")
        #expect(!agent.stderrLines.contains { $0.contains("[idle]") && $0.contains("watchdog") }, "\(agent.transcript)")
        #expect(status(agent, "idle")?["state"] == "running")
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aProgramThatNeverSaysReadyIsAFailedStartAtItsStartTimeout() throws {
        let agent = try JSONLinesFixture.start(steady + #"""
            , "mute": {"type": "py_fault", "mode": "never_ready", "start_timeout": 0.5, "restart": {"initial_delay": 0.05, "max_restarts": 1, "within": 600}}
            """#, label: "py-never-ready")
        let failed = agent.waitForLine(onStderr: true) { $0.contains("[mute]") && $0.contains("the start limit") }
        #expect(failed != nil, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("[mute]") && $0.contains("ready") && $0.contains("0.5 s") }, "\(agent.transcript)")
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func wrongSettingsSaidByTheProgramFailItWithoutRestarts() throws {
        let agent = try JSONLinesFixture.start(steady + #"""
            , "wrong": {"type": "py_fault", "mode": "bad_settings"}
            """#, label: "py-bad-settings")
        let failed = JSONLinesFixture.wait { () -> JSONValue? in
            let entry = status(agent, "wrong")
            return entry?["state"] == "failed" ? entry : nil
        }
        #expect(failed != nil, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("[wrong]") && $0.contains("this process cannot work with these settings") }, "\(agent.transcript)")
        #expect(agent.workerPids("wrong").count == 1, "\(agent.transcript)")
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func garbageLinesAreRefusedCountedAndLoggedBoundedAndTheGoodOnesAllArrive() throws {
        let agent = try JSONLinesFixture.start(steady + #"""
            , "junk": {"type": "py_garbage", "count": 50}
            """#, label: "py-garbage")
        let good = JSONLinesFixture.wait { () -> [[String: Any]]? in
            let events = JSONLinesFixture.events(agent, type: "py_after_garbage")
            return events.count >= 50 ? events : nil
        }
        #expect(good?.compactMap { ($0["payload"] as? [String: Any])?["n"] as? Int } == Array(1...50), "\(agent.transcript)")
        // Eleven malformed lines, the 2 MiB one among them, each refused and counted.
        let refused = JSONLinesFixture.wait { () -> Int? in
            let count = status(agent, "junk")?["lines_refused"]?.numberValue?.intValue
            return count == 11 ? count : nil
        }
        #expect(refused == 11, "\(String(describing: status(agent, "junk")))\n\(agent.transcript)")
        let table = try runProgram("agent-control", ["status", "--settings", agent.settingsFile]).stdout
        #expect(table.contains("junk: 11 lines of its program refused"), "\(table)")
        // Logged at most one line a second: far fewer lines than refusals here.
        let logged = agent.stderrLines.filter { $0.contains("[junk]") && $0.contains("refused") }
        #expect(!logged.isEmpty && logged.count < 11, "\(logged)")
        #expect(agent.workerPids("junk").count == 1, "\(agent.transcript)")
        #expect(status(agent, "junk")?["state"] == "running")
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aFloodIntoABlockingQueueLosesNothingAndTheSupervisorAnswersMeanwhile() throws {
        let count = 100_000
        let release = TestPaths.temporaryDirectory("py-flood-release") + "/go"
        let agent = try JSONLinesFixture.start(steady + #"""
            , "flood": {"type": "py_fault", "mode": "flood", "count": \#(count), "after": 0.2},
            "watch": {"type": "py_watch", "subscribe": ["py_flood", "py_end"], "first_wait_for": "\#(release)", "queue": {"limit_bytes": 65536, "when_full": "block"}}
            """#, rest: #""store": {"enabled": false}"#, label: "py-flood-block")
        // The watch is held at its first event until the flood is paused: the flood fills its
        // delivery ring (4 MB, some 70,000 of these events) and its queue meanwhile, however
        // fast the machine lets it write — not a race between the two programs' speeds (a
        // 10 s hold lapsed at load 50 before a slowed flood had filled them).
        let paused = JSONLinesFixture.wait(timeout: 180) { (status(agent, "flood")?["times_paused"]?.numberValue?.intValue ?? 0) > 0 ? true : nil }
        // While the flood is held, the supervisor answers and the neighbour emits.
        expectUnharmed(agent)
        #expect(FileManager.default.createFile(atPath: release, contents: nil), "cannot release the watch: \(release)")
        #expect(paused == true, "the flood never blocked: the test proves nothing\n\(agent.transcript)")
        let report = agent.waitForLine(timeout: 180) { $0.contains("py_watch saw") }
        #expect(report?.contains("py_watch saw \(count) events from ['flood'] with 0 gaps") == true, "\(agent.transcript)")
        #expect(status(agent, "watch")?["events_dropped"]?.numberValue?.intValue ?? 0 == 0)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }

    @Test func aFloodIntoADroppingQueueDropsTheOldestAndCountsThem() throws {
        let count = 20_000
        let agent = try JSONLinesFixture.start(steady + #"""
            , "flood": {"type": "py_fault", "mode": "flood", "count": \#(count), "after": 2},
            "watch": {"type": "py_watch", "subscribe": ["py_flood", "py_end"], "delay": 0.001, "queue": {"limit_bytes": 4096, "when_full": "drop-oldest"}}
            """#, rest: #""store": {"enabled": false}"#, label: "py-flood-drop")
        let report = agent.waitForLine(timeout: 180) { $0.contains("py_watch saw") }
        #expect(report != nil, "\(agent.transcript)")
        #expect(report?.contains("py_watch saw \(count) events") == false, "\(report ?? "")")
        let dropped = status(agent, "watch")?["events_dropped"]?.numberValue?.intValue ?? 0
        #expect(dropped > 0, "\(agent.transcript)")
        #expect((status(agent, "flood")?["times_paused"]?.numberValue?.intValue ?? 0) == 0)
        expectUnharmed(agent)
        #expect(agent.stop() == 0, "\(agent.transcript)")
    }
}
