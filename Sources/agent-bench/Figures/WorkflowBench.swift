import AgentBase
import AgentCore
import AgentRuntime
import Foundation
import GRDB
import JSONSchema

/// Figure 12: workflows through a real `agent-control console` with the store on — persisted
/// steps per second through a chain of 10 no-op steps, the restart of an agent with 1,000
/// runs waiting for an event, and the latency from an awaited event to the waiting step's
/// continuation. No baseline: no workflow engine of the kind (a durable step log in the same
/// process as the supervisor) is installable here to run the same work fairly.
enum WorkflowBench {
    /// The issue's targets.
    enum Target {
        static let stepsPerSecond = 5_000.0
        static let resumeSeconds = 1.0
        static let continuation99 = 5.0
    }

    static let chainLength = 10

    static func run(_ environment: BenchEnvironment) -> Section {
        let burst = environment.quick ? 500 : 2_000, warmup = environment.quick ? 50 : 200
        let waiting = 1_000
        let samples = environment.quick ? 50 : 200
        var section = Section(
            number: 12, title: "Workflows: persisted steps/s, restart with \(waiting) waiting runs, event → continuation",
            method: "agent-control console (the real binary, the store on, its batching writer: each step's start and result committed before the next step starts). Steps/s: a workflow of \(chainLength) `set` steps (no task, no process: the step log's cost) started by `on_event` for each `bench_task` event of a bench_task_source (\(warmup) warm-up events, 1 s pause, then \(burst) as fast as it emits); steps/s = \(burst) × \(chainLength) / (the time the bench saw the last burst run committed as succeeded in workflow_runs − the first burst event's emit time, CLOCK_REALTIME); every run's \(chainLength) step records checked in workflow_steps. Restart: \(waiting) runs of a workflow [wait_event bench.release, set] started the same way and committed as waiting; the agent stopped (SIGTERM) and started again from the same store without the feeder; launch → the control socket answers; then a workflow that publishes bench.release is run (its answer: committed) and the bench polls the store until all \(waiting) runs have gone past their wait and are committed as succeeded; the same launch → control socket with no run waiting, for comparison. Event → continuation: one run at a time (\(samples) after 10 of warm-up) of [wait_event bench.go, set]; once it is waiting, a second workflow publishes bench.go; from the store: the event's time in the event log (stamped when published) → the wait step's ended_at (the event arrived, in memory) and → the next step's started_at (after the wait's result was committed).")
        let load = MachineLoad.sample()
        section.note(String(format: "machine busy just before this figure: %.0f %% of all cores (1 s sample of /proc/stat)", load.busyPercent)
                     + (load.strays.isEmpty ? "" : "; running, not started by the bench: " + load.strays.joined(separator: ", ")))
        do {
            try measureSteps(environment, burst: burst, warmup: warmup, into: &section)
            try measureRestart(environment, runs: waiting, into: &section)
            try measureContinuation(environment, samples: samples, warmup: 10, into: &section)
        } catch let error as AgentTaskBench.NotAvailable {
            section.note("workflows not available in this build (no figure): \(error.description)")
        } catch {
            section.fail("workflows: \(error)")
        }
        return section
    }

    // MARK: Steps per second

    static func chain() -> String {
        (1...chainLength).map { #"{"id": "s\#($0)", "set": {"vars": {"s\#($0)": \#($0)}}}"# }.joined(separator: ", ")
    }

    static func measureSteps(_ environment: BenchEnvironment, burst: Int, warmup: Int, into section: inout Section) throws {
        let settings = """
            {"enabled_modules": ["bench"],
             "processes": {"feeder": {"type": "bench_task_source", "count": \(burst), "warmup": \(warmup), "pause": 1, "start_delay": 0.5}},
             "workflows": {"chain": {"on_event": {"type": "bench_task"}, "steps": [\(chain())]}}}
            """
        let (run, agentDirectory) = try start(environment, name: "workflow-steps", settings: settings)
        defer { AgentTaskBench.stopAgent(run) }
        let store = AgentTaskBench.storePath(agentDirectory)
        let total = burst + warmup
        let deadline = Clock.now() + 120 + Double(total) / 100
        var reader: StoreFile?
        var observed: Int64 = 0
        var seen = 0
        while Clock.now() < deadline {
            run.pump(maxWait: 0)
            if reader == nil, FileManager.default.fileExists(atPath: store) { reader = try? StoreFile(path: store) }
            if let reader {
                let counts = try reader.database.read { db in
                    try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM workflow_runs WHERE workflow = 'chain' AND finished = 1 GROUP BY status")
                }
                seen = 0
                for row in counts {
                    let status: String = row["status"], count: Int = row["n"]
                    if status == "succeeded" { seen = count } else if count > 0 { throw BenchError("\(count) runs of chain ended \(status)") }
                }
                if seen >= total {
                    observed = Clock.realtimeNanoseconds()
                    break
                }
            }
            if run.exitStatus != nil { throw BenchError("agent-control exited during the burst: \(run.errors.prefix(3).joined(separator: " | "))") }
            usleep(2_000)
        }
        guard observed > 0, let reader else { throw BenchError("\(seen) of \(total) runs of chain committed as succeeded within the time allowed") }
        let (runs, steps) = try reader.database.read { db in
            (try String.fetchAll(db, sql: "SELECT data FROM workflow_runs WHERE workflow = 'chain'"),
             try Int.fetchOne(db, sql: "SELECT count(*) FROM workflow_steps s JOIN workflow_runs r ON r.id = s.run_id WHERE r.workflow = 'chain' AND s.status = 'succeeded'") ?? 0)
        }
        let sent = runs.compactMap { try? JSONValue.parse($0) }.filter { $0["input"]?["payload"]?["phase"] == "burst" }
            .compactMap { $0["input"]?["payload"]?["sent_ns"]?.numberValue?.intValue }
        guard sent.count == burst, let first = sent.min() else { throw BenchError("the store holds \(sent.count) burst runs of chain, expected \(burst)") }
        if steps != total * chainLength { section.fail("workflows: \(steps) step records succeeded, expected \(total * chainLength)") }
        let seconds = Double(observed - Int64(first)) / 1e9
        let perSecond = Double(burst * chainLength) / seconds
        section.add(Figure("persisted steps/s, \(chainLength)-step no-op chain", .perSecond, median: perSecond, count: burst * chainLength,
                           note: String(format: "%d runs in %.3f s (%.0f runs/s); target ≥ %.0f steps/s: %@", burst, seconds, Double(burst) / seconds,
                                        Target.stepsPerSecond, perSecond >= Target.stepsPerSecond ? "met" : "NOT met")))
    }

    // MARK: Restart with runs waiting

    static func measureRestart(_ environment: BenchEnvironment, runs: Int, into section: inout Section) throws {
        let workflows = #"""
            "waiter": {"on_event": {"type": "bench_task"}, "steps": [{"id": "w", "wait_event": {"type": "bench.release"}}, {"id": "after", "set": {"vars": {"done": true}}}]},
            "release": {"steps": [{"id": "go", "publish": {"type": "bench.release", "payload": {}}}]}
            """#
        let feeding = """
            {"enabled_modules": ["bench"],
             "processes": {"feeder": {"type": "bench_task_source", "count": \(runs), "warmup": 0, "pause": 0, "start_delay": 0.5}},
             "workflows": {\(workflows)}}
            """
        let (first, agentDirectory) = try start(environment, name: "workflow-restart", settings: feeding)
        let store = AgentTaskBench.storePath(agentDirectory)
        let settled = try waitForStore(store, run: first, timeout: 120) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM workflow_runs WHERE workflow = 'waiter' AND status = 'waiting'") ?? 0 >= runs
        }
        AgentTaskBench.stopAgent(first)
        guard settled else { throw BenchError("\(runs) runs of waiter did not all commit as waiting") }

        // The same agent again, without the feeder: the runs wait in its store.
        let file = try environment.writeAgent("workflow-restart", settings: #"{"enabled_modules": ["bench"], "processes": {}, "workflows": {\#(workflows)}}"#)
        let second = try ConsoleRun(environment: environment, settingsFile: file)
        defer { AgentTaskBench.stopAgent(second) }
        let paths = AgentPaths(agentDirectory: agentDirectory)
        try AgentTaskBench.waitForControl(second, paths: paths)
        let answered = Clock.now()
        let sent = Clock.now()
        let release = try ControlClient.send(["command": "workflow_run", "name": "release"], paths: paths, timeout: 60)
        guard release["ok"]?.boolValue == true else { throw BenchError("workflow_run release answered \(release.serialized().prefix(300))") }
        let done = try waitForStore(store, run: second, timeout: 120) { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM workflow_runs WHERE workflow = 'waiter' AND status = 'succeeded'") ?? 0 >= runs
        }
        let finished = Clock.now()
        guard done else { throw BenchError("the \(runs) waiting runs did not all go on after the restart and the event") }
        let total = finished - second.launchedAt
        section.add(Figure("restart with \(runs) runs waiting: launch → control socket answers", .milliseconds,
                           median: (answered - second.launchedAt) * 1000, count: 1, note: "their step logs read and their waits armed again"))
        section.add(Figure("  launch → all \(runs) runs past their wait, committed", .milliseconds, median: total * 1000, count: 1,
                           note: String(format: "the event sent once the control socket answered; event → all committed %.0f ms; target < %.0f s: %@",
                                        (finished - sent) * 1000, Target.resumeSeconds, total < Target.resumeSeconds ? "met" : "NOT met")))

        // For comparison: the same agent with no run waiting (a fresh store).
        let emptyFile = try environment.writeAgent("workflow-restart-empty", settings: #"{"enabled_modules": ["bench"], "processes": {}, "workflows": {\#(workflows)}}"#)
        let empty = try ConsoleRun(environment: environment, settingsFile: emptyFile)
        defer { AgentTaskBench.stopAgent(empty) }
        try AgentTaskBench.waitForControl(empty, paths: AgentPaths(agentDirectory: URL(fileURLWithPath: emptyFile).deletingLastPathComponent().path))
        section.add(Figure("  the same start with no run waiting: launch → control socket answers", .milliseconds,
                           median: (Clock.now() - empty.launchedAt) * 1000, count: 1))
    }

    // MARK: Event → continuation

    static func measureContinuation(_ environment: BenchEnvironment, samples: Int, warmup: Int, into section: inout Section) throws {
        let settings = #"""
            {"enabled_modules": ["bench"], "processes": {},
             "workflows": {"one": {"steps": [{"id": "w", "wait_event": {"type": "bench.go"}}, {"id": "next", "set": {"vars": {"x": 1}}}]},
                           "go": {"steps": [{"id": "send", "publish": {"type": "bench.go", "payload": {}}}]}}}
            """#
        let (run, agentDirectory) = try start(environment, name: "workflow-continuation", settings: settings)
        defer { AgentTaskBench.stopAgent(run) }
        let paths = AgentPaths(agentDirectory: agentDirectory)
        var waiters: [String] = []
        for index in 0..<(warmup + samples) {
            let started = try ControlClient.send(["command": "workflow_run", "name": "one"], paths: paths, timeout: 60)
            guard let id = started["run"]?["id"]?.stringValue else { throw BenchError("workflow_run one answered \(started.serialized().prefix(300))") }
            // Waiting: the wait step's start committed (the engine answers the run's start once committed).
            var waiting = false
            for _ in 0..<5_000 where !waiting {
                let shown = try ControlClient.send(["command": "workflow_show", "id": .string(id)], paths: paths, timeout: 60)
                waiting = shown["run"]?["status"] == "waiting"
                if !waiting { usleep(200) }
            }
            guard waiting else { throw BenchError("run \(id) of one never waited") }
            let sent = try ControlClient.send(["command": "workflow_run", "name": "go", "wait": true], paths: paths, timeout: 60)
            guard sent["run"]?["status"] == "succeeded" else {
                throw BenchError("workflow_run go answered \(sent.serialized().prefix(300))")
            }
            var finished = false
            for _ in 0..<5_000 where !finished {
                let shown = try ControlClient.send(["command": "workflow_show", "id": .string(id)], paths: paths, timeout: 60)
                finished = shown["run"]?["status"] == "succeeded"
                if !finished { usleep(200) }
            }
            guard finished else { throw BenchError("run \(id) of one did not go on after its event") }
            if index >= warmup { waiters.append(id) }
            run.pump(maxWait: 0)
        }
        let store = try StoreFile(path: AgentTaskBench.storePath(agentDirectory))
        // The store's writer commits a moment after the answers: wait for the last records.
        var records: [String: [String: JSONValue]] = [:]
        var events: [Double] = []
        let deadline = Clock.now() + 30
        repeat {
            (records, events) = try store.database.read { db in
                var byRun: [String: [String: JSONValue]] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT run_id, step, data FROM workflow_steps") {
                    let run: String = row["run_id"], step: String = row["step"], data: String = row["data"]
                    byRun[run, default: [:]][step] = try? JSONValue.parse(data)
                }
                // Each bench.go event with its emit time (stamped when published), in order.
                return (byRun, try Double.fetchAll(db, sql: "SELECT time FROM events WHERE type = 'bench.go' ORDER BY rowid"))
            }
            if events.count == warmup + samples, waiters.allSatisfy({ records[$0]?["next"]?["started_at"] != nil }) { break }
            usleep(10_000)
        } while Clock.now() < deadline
        guard events.count == warmup + samples else { throw BenchError("the store holds \(events.count) bench.go events, expected \(warmup + samples)") }
        var arrived = Samples(), continued = Samples()
        for (index, waiter) in waiters.enumerated() {
            let emitted = events[warmup + index]
            guard let waitEnded = records[waiter]?["w"]?["ended_at"]?.numberValue?.doubleValue,
                  let next = records[waiter]?["next"]?["started_at"]?.numberValue?.doubleValue else {
                throw BenchError("run \(waiter) lacks its step times in the store")
            }
            arrived.append((waitEnded - emitted) * 1000)
            continued.append((next - emitted) * 1000)
        }
        section.add(Figure("event → next step started (wait's result committed)", .milliseconds, samples: continued,
                           note: String(format: "target p99 < %.0f ms: %@", Target.continuation99, continued.p99 < Target.continuation99 ? "met" : "NOT met")))
        section.add(Figure("  event → wait step ended (in memory)", .milliseconds, samples: arrived))
    }

    // MARK: Helpers

    static func start(_ environment: BenchEnvironment, name: String, settings: String) throws -> (ConsoleRun, String) {
        try AgentTaskBench.startAgent(environment, name: name, settings: settings, refusalMentioning: "/workflows")
    }

    /// Polls the store every 2 ms until `condition` holds (true) or `timeout` passes (false).
    static func waitForStore(_ path: String, run: ConsoleRun, timeout: Double, _ condition: (Database) throws -> Bool) throws -> Bool {
        let deadline = Clock.now() + timeout
        var reader: StoreFile?
        while Clock.now() < deadline {
            run.pump(maxWait: 0)
            if reader == nil, FileManager.default.fileExists(atPath: path) { reader = try? StoreFile(path: path) }
            if let reader, try reader.database.read(condition) { return true }
            if run.exitStatus != nil { throw BenchError("agent-control exited: \(run.errors.prefix(3).joined(separator: " | "))") }
            usleep(2_000)
        }
        return false
    }
}
