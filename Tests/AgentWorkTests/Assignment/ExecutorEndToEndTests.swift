import AgentTestSupport
import Foundation
import Testing

/// Executors through the real binaries: `agent-control console` with executor replicas taking
/// the `faults` module's task handler, driven by `agent-control task|executor …` over the
/// control socket.
@Suite(.ownThreads) struct ExecutorEndToEndTests {
    static func agent(_ name: String, store: Bool = true) throws -> AgentRun {
        let settings = #"""
            {"enabled_modules": ["faults"], "store": {"enabled": \#(store)},
             "processes": {"pool": {"type": "executor", "replicas": 2, "max_concurrent": 1, "tasks": {"work": {}}}},
             "tasks": {"work": {"type": "faults.fault_task", "max_concurrent": 4, "retries": {"max": 0, "initial_delay": 0.1}}}}
            """#
        return try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: TestPaths.temporaryDirectory(name))
    }

    static func control(_ agent: AgentRun, _ arguments: [String], timeout: Double = 120) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", agent.settingsFile], timeout: timeout)
    }

    static func json(_ text: String) -> [String: Any] {
        ((try? JSONSerialization.jsonObject(with: Data(text.utf8))) as? [String: Any]) ?? [:]
    }

    /// The pid of process `name` in `status --json`, once it has one.
    static func pid(of name: String, in agent: AgentRun) throws -> Int32? {
        for _ in 0..<200 {
            let status = json(try control(agent, ["status", "--json"]).stdout)
            let processes = status["processes"] as? [[String: Any]] ?? []
            if let pid = processes.first(where: { $0["name"] as? String == name })?["pid"] as? Int, pid > 0 { return Int32(pid) }
            Thread.sleep(forTimeInterval: 0.05)
        }
        return nil
    }

    @Test func aRunWhoseExecutorWorkerIsKilledCompletesOnTheOtherExecutor() throws {
        let agent = try Self.agent("executor-killed")
        defer {
            _ = agent.stop()
            try? FileManager.default.removeItem(atPath: agent.directory)
        }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        // Long enough to be still going after the commands below on a loaded machine.
        let queued = try Self.control(agent, ["task", "run", "work", "--input", #"{"mode": "sleep", "ms": 8000}"#, "--json"])
        let id = try #require(Self.json(queued.stdout)["id"] as? String, "\(queued.stdout)\(queued.stderr)")
        // Find the executor it went to, and kill that executor's worker during the run.
        var first: String?
        for _ in 0..<200 where first == nil {
            let run = Self.json(try Self.control(agent, ["task", "show", id, "--json"]).stdout)
            if run["status"] as? String == "running" { first = run["executor"] as? String }
            if first == nil { Thread.sleep(forTimeInterval: 0.05) }
        }
        let executor = try #require(first, "\(agent.transcript)")
        #expect(["pool#1", "pool#2"].contains(executor))
        let pid = try #require(try Self.pid(of: "\(executor):work", in: agent), "no worker \(executor):work in status")
        Thread.sleep(forTimeInterval: 0.3)
        #expect(kill(pid, SIGKILL) == 0)

        var final: [String: Any] = [:]
        for _ in 0..<400 {
            final = Self.json(try Self.control(agent, ["task", "show", id, "--json"]).stdout)
            if ["succeeded", "failed"].contains(final["status"] as? String ?? "") { break }
            Thread.sleep(forTimeInterval: 0.05)
        }
        #expect(final["status"] as? String == "succeeded", "\(final)\n\(agent.transcript)")
        #expect(final["attempt"] as? Int == 2, "retried once though its task allows no retries")
        let other = executor == "pool#1" ? "pool#2" : "pool#1"
        #expect(final["executor"] as? String == other, "\(final)")
        let output = final["output"] as? [String: Any] ?? [:]
        #expect(output["runID"] as? String == id, "the second attempt has the same run id")
        #expect(output["idempotencyKey"] as? String == final["idempotency_key"] as? String && output["idempotencyKey"] as? String == id,
                "and the same idempotency key: \(output)")
        #expect(output["pid"] as? Int != Int(pid))

        let list = Self.json(try Self.control(agent, ["executor", "list", "--json"]).stdout)
        let states = (list["executors"] as? [[String: Any]] ?? []).map { "\($0["name"] ?? "")=\($0["state"] ?? "")" }
        #expect(states.count == 2, "\(list)")
        let events = agent.jsonLines.filter { ($0["type"] as? String)?.hasPrefix("task.") == true }.compactMap { $0["type"] as? String }
        #expect(events.contains("task.assigned") && events.contains("task.reassigned"), "\(events)")
    }

    @Test func drainAssignAndSetStrategyThroughTheCommandLineAndTheStrategyOutlivesARestart() throws {
        let directory = TestPaths.temporaryDirectory("executor-commands")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = #"""
            {"enabled_modules": ["faults"],
             "processes": {"pool": {"type": "executor", "replicas": 2, "max_concurrent": 1, "tasks": {"work": {}}}},
             "tasks": {"work": {"type": "faults.fault_task", "max_concurrent": 4}}}
            """#
        var agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: directory)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        let drained = try Self.control(agent, ["executor", "drain", "pool#1"])
        #expect(drained.status == 0 && drained.stdout.contains("pool#1  draining"), "\(drained.stdout)\(drained.stderr)")
        let unknown = try Self.control(agent, ["executor", "drain", "pool#9"])
        #expect(unknown.status == 1 && unknown.stderr.contains("no executor named \"pool#9\""), "\(unknown.stderr)")
        // Two slow runs: pool#2 takes one; pool#1 is drained, so the other waits (for longer
        // than the next commands take on a loaded machine: with 1.5 s, the first had ended and
        // pool#2 had taken the second before the test assigned it; the first is cancelled once
        // the second is done).
        var ids: [String] = []
        for ms in [60_000, 6000] {
            let queued = try Self.control(agent, ["task", "run", "work", "--input", #"{"mode": "sleep", "ms": \#(ms)}"#])
            ids.append(queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        Thread.sleep(forTimeInterval: 0.3)
        let second = Self.json(try Self.control(agent, ["task", "show", ids[1], "--json"]).stdout)
        #expect(second["status"] as? String == "queued", "\(second)")
        // By hand to the drained one: it waits for it; resumed, pool#1 takes it.
        let assigned = try Self.control(agent, ["task", "assign", ids[1], "--to", "pool#1"])
        #expect(assigned.status == 0, "\(assigned.stderr)")
        #expect(try Self.control(agent, ["executor", "resume", "pool#1"]).status == 0)
        let done = try Self.control(agent, ["task", "show", ids[1], "--json"])
        var run = Self.json(done.stdout)
        for _ in 0..<600 where run["status"] as? String != "succeeded" {
            Thread.sleep(forTimeInterval: 0.05)
            run = Self.json(try Self.control(agent, ["task", "show", ids[1], "--json"]).stdout)
        }
        #expect(run["executor"] as? String == "pool#1" && run["assigned_to"] as? String == "pool#1", "\(run)")
        #expect(try Self.control(agent, ["task", "cancel", ids[0]]).status == 0)

        let set = try Self.control(agent, ["task", "set-strategy", "round_robin", "--task", "work"])
        #expect(set.status == 0 && set.stdout.contains("work=round_robin"), "\(set.stdout)\(set.stderr)")
        let bad = try Self.control(agent, ["task", "set-strategy", "fastest"])
        #expect(bad.status != 0 && bad.stderr.contains("best_fit, load_balanced, round_robin, priority_first"), "\(bad.stderr)")
        #expect(agent.stop() == 0)

        agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        let list = try Self.control(agent, ["executor", "list"])
        #expect(list.stdout.contains("work=round_robin"), "kept in the store: \(list.stdout)")
    }

    /// A burst of runs from an `on_event` trigger (the bench's feeder) through 4 executor
    /// replicas: every run succeeds, and the replicas share them — each run's record names the
    /// replica that ran it, each replica runs its handler in a worker of its own.
    @Test func aBurstOfRunsIsSpreadOverTheExecutorReplicas() throws {
        let directory = TestPaths.temporaryDirectory("executor-burst")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let burst = 2_000
        let settings = #"""
            {"enabled_modules": ["bench"],
             "processes": {"feeder": {"type": "bench_task_source", "count": \#(burst), "warmup": 0, "pause": 0, "start_delay": 0.2},
                           "pool": {"type": "executor", "replicas": 4, "max_concurrent": 4, "tasks": {"noop": {}}}},
             "tasks": {"noop": {"type": "bench.noop", "max_concurrent": 16, "on_event": {"type": "bench_task"}}}}
            """#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"], directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        var runs: [[String: Any]] = []
        for _ in 0..<1200 {
            // One run per line, newest first.
            let listed = try Self.control(agent, ["task", "runs", "--task", "noop", "--limit", "10000", "--json"]).stdout
            runs = listed.split(separator: "\n").map { Self.json(String($0)) }
            if runs.count == burst, runs.allSatisfy({ $0["status"] as? String == "succeeded" }) { break }
            Thread.sleep(forTimeInterval: 0.1)
        }
        #expect(runs.count == burst, "\(runs.count) of \(burst) runs")
        #expect(runs.allSatisfy { $0["status"] as? String == "succeeded" }, "\(runs.first { $0["status"] as? String != "succeeded" } ?? [:])")
        var byReplica: [String: Int] = [:]
        for run in runs { byReplica[run["executor"] as? String ?? "none", default: 0] += 1 }
        #expect(Set(byReplica.keys).isSubset(of: ["pool#1", "pool#2", "pool#3", "pool#4"]), "\(byReplica)")
        #expect(byReplica.count > 1, "every run went to one replica: \(byReplica)")
        // Each replica that ran some has a worker of its own.
        var pids: Set<Int32> = []
        for replica in byReplica.keys { if let pid = try Self.pid(of: "\(replica):noop", in: agent) { pids.insert(pid) } }
        #expect(pids.count == byReplica.count, "workers \(pids) for \(byReplica)")
    }
}
