import AgentBase
import AgentCore
import AgentRuntime
import Foundation
import GRDB
import JSONSchema

/// The runtime's side of figure 10: a no-op module task (`bench.noop`) and a `command` task
/// running /bin/true, in a real `agent-control console` with the store on. Latency: runs
/// requested one at a time over the control socket (`task_run` with `wait`, as `agent-control
/// task run --wait` sends it), each carrying its request time in its input. Throughput: a
/// burst of runs triggered by `on_event` from a `bench_task_source` in the same agent, counted
/// as they are committed in the store.
enum AgentTaskBench {
    /// One kind of task and how it is measured.
    struct Kind {
        /// The task's name in the settings, and its definition (JSON, without `on_event`).
        var task: String
        var definition: String
        /// Where its start is taken: the handler's output (`started_ns`) or the run's record.
        var startFromOutput: Bool
        var latencyRuns: Int
        var latencyWarmup: Int
        var burst: Int
        var burstWarmup: Int
        /// More `"processes"` members (JSON, each with a leading comma): executors.
        var processes = ""
        /// Names the measurement's agent folder (`task-burst-<task><label>`): each measurement
        /// of the same task needs its own, or it would read the store an earlier one left.
        var label = ""
    }

    /// This build cannot run the kind (its runner or handler is not in it yet): the agent's
    /// own words.
    struct NotAvailable: Error, CustomStringConvertible {
        var description: String
    }

    struct Latency {
        /// request → started and request → completed, in milliseconds.
        var started = Samples()
        var completed = Samples()
    }

    struct Burst {
        var runs: Int
        var seconds: Double
        /// The burst's runs by the declared executor that ran them (empty: none declared).
        var byExecutor: [String: Int] = [:]
        var perSecond: Double { seconds > 0 ? Double(runs) / seconds : 0 }
    }

    /// Requests `kind.latencyWarmup + kind.latencyRuns` runs one after another, each with
    /// `{"sent_ns": …}` (CLOCK_REALTIME right before the request) and `"wait": true`; reads the
    /// measured ones back from the store once committed.
    static func latency(_ environment: BenchEnvironment, _ kind: Kind) throws -> Latency {
        let settings = #"{"enabled_modules": ["bench"], "processes": {}, "tasks": {"\#(kind.task)": \#(kind.definition)}}"#
        let file = try environment.writeAgent("task-latency-\(kind.task)\(kind.label)", settings: settings)
        let agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        try requireFreshStore(agentDirectory)
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        defer { stopAgent(run) }
        let paths = AgentPaths(agentDirectory: agentDirectory)
        try waitForControl(run, paths: paths)
        var ids: [String] = []
        for index in 0..<(kind.latencyWarmup + kind.latencyRuns) {
            let sent = Clock.realtimeNanoseconds()
            let request: JSONValue = ["command": "task_run", "name": .string(kind.task), "input": ["sent_ns": .number(JSONNumber(Int(sent)))],
                                      "wait": true]
            let answer = try ControlClient.send(request, paths: paths, timeout: 60)
            guard answer["ok"]?.boolValue == true, let id = answer["run"]?["id"]?.stringValue else {
                throw BenchError("task_run \(kind.task) answered \(answer.serialized().prefix(300))")
            }
            guard answer["run"]?["status"]?.stringValue == "succeeded" else {
                if let error = answer["run"]?["error"]?.stringValue, error.hasPrefix("no runner for task type") { throw NotAvailable(description: error) }
                throw BenchError("run \(id) of \(kind.task) did not succeed: \(answer.serialized().prefix(300))")
            }
            if index >= kind.latencyWarmup { ids.append(id) }
            run.pump(maxWait: 0)
        }
        // The warm-up's runs are in the store too: wait for the measured ones themselves (the
        // store's writer commits a moment after the answer).
        let records = try committedRuns(of: kind.task, store: storePath(agentDirectory), atLeast: ids.count + kind.latencyWarmup, run: run)
        var latency = Latency()
        let wanted = Set(ids)
        for record in records where wanted.contains(record.id) {
            guard let sent = record.sent, let started = kind.startFromOutput ? record.startedFromOutput : record.startedAt,
                  let ended = record.endedAt else {
                throw BenchError("run \(record.id) of \(kind.task) lacks its times in the store: \(record.data.prefix(300))")
            }
            latency.started.append(Double(started - sent) / 1e6)
            latency.completed.append(Double(ended - sent) / 1e6)
        }
        guard latency.started.count == ids.count else {
            throw BenchError("\(latency.started.count) of \(ids.count) runs of \(kind.task) found in the store")
        }
        return latency
    }

    /// Starts an agent whose `bench_task_source` emits `burstWarmup` events, pauses, then
    /// `burst` events as fast as it can; the task runs on each (`on_event`). Completed runs/s =
    /// burst / (the time the bench saw the last run committed as succeeded − the first burst
    /// event's emit time, both CLOCK_REALTIME).
    static func burst(_ environment: BenchEnvironment, _ kind: Kind) throws -> Burst {
        let eventType = "bench_task"
        var definition = kind.definition
        definition.removeLast()
        definition += #", "on_event": {"type": "\#(eventType)"}}"#
        let settings = """
            {"enabled_modules": ["bench"],
             "processes": {"feeder": {"type": "bench_task_source", "count": \(kind.burst), "warmup": \(kind.burstWarmup), "pause": 1, "start_delay": 0.5}\(kind.processes)},
             "tasks": {"\(kind.task)": \(definition)}}
            """
        let file = try environment.writeAgent("task-burst-\(kind.task)\(kind.label)", settings: settings)
        let agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        try requireFreshStore(agentDirectory)
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        defer { stopAgent(run) }
        try waitForControl(run, paths: AgentPaths(agentDirectory: agentDirectory))
        let store = storePath(agentDirectory)
        let total = kind.burst + kind.burstWarmup
        let deadline = Clock.now() + 120 + Double(total) / 200
        var reader: StoreFile?
        var seen = 0
        var observed: Int64 = 0
        while Clock.now() < deadline {
            run.pump(maxWait: 0)
            if reader == nil, FileManager.default.fileExists(atPath: store) { reader = try? StoreFile(path: store) }
            if let reader {
                let counts = try reader.database.read { db in
                    try Row.fetchAll(db, sql: "SELECT status, count(*) AS n FROM task_runs WHERE task = ? AND finished = 1 GROUP BY status",
                                     arguments: [kind.task])
                }
                var succeeded = 0
                for row in counts {
                    let status: String = row["status"]
                    let count: Int = row["n"]
                    if status == "succeeded" { succeeded = count } else if count > 0 {
                        throw BenchError("\(count) runs of \(kind.task) ended \(status) during the burst")
                    }
                }
                seen = succeeded
                if succeeded >= total {
                    observed = Clock.realtimeNanoseconds()
                    break
                }
            }
            if run.exitStatus != nil { throw BenchError("agent-control exited during the burst: \(run.errors.prefix(3).joined(separator: " | "))") }
            usleep(2_000)
        }
        guard observed > 0 else { throw BenchError("\(seen) of \(total) runs of \(kind.task) committed as succeeded within the time allowed") }
        let records = try committedRuns(of: kind.task, store: store, atLeast: total, run: run)
        let firstBurst = records.filter { $0.phase == "burst" }.compactMap(\.sent).min()
        guard let firstBurst, records.filter({ $0.phase == "burst" }).count == kind.burst else {
            throw BenchError("the store holds \(records.filter { $0.phase == "burst" }.count) burst runs of \(kind.task), expected \(kind.burst)")
        }
        var byExecutor: [String: Int] = [:]
        for record in records where record.phase == "burst" {
            if let executor = record.executor { byExecutor[executor, default: 0] += 1 }
        }
        return Burst(runs: kind.burst, seconds: Double(observed - firstBurst) / 1e9, byExecutor: byExecutor)
    }

    /// A run's record as the store keeps it (`task_runs.data`, times in seconds).
    struct Record {
        var id: String
        var data: String
        var sent: Int64?
        var phase: String?
        var startedFromOutput: Int64?
        var startedAt: Int64?
        var endedAt: Int64?
        var executor: String?

        init?(data: String) {
            guard let value = try? JSONValue.parse(data), let id = value["id"]?.stringValue else { return nil }
            self.id = id
            self.data = data
            let input = value["input"]
            let sentValue = input?["sent_ns"] ?? input?["payload"]?["sent_ns"]
            sent = sentValue?.numberValue?.intValue.map(Int64.init)
            phase = input?["payload"]?["phase"]?.stringValue
            startedFromOutput = value["output"]?["started_ns"]?.numberValue?.intValue.map(Int64.init)
            executor = value["executor"]?.stringValue
            func nanoseconds(_ key: String) -> Int64? {
                value[key]?.numberValue.map { Int64(saturating: ($0.doubleValue * 1e9).rounded()) }
            }
            startedAt = nanoseconds("started_at")
            endedAt = nanoseconds("ended_at")
        }
    }

    /// The finished runs of `task` in the store, once at least `count` are committed.
    static func committedRuns(of task: String, store: String, atLeast count: Int, run: ConsoleRun) throws -> [Record] {
        let file = try StoreFile(path: store)
        let deadline = Clock.now() + 30
        while true {
            run.pump(maxWait: 0)
            let rows = try file.database.read { db in
                try String.fetchAll(db, sql: "SELECT data FROM task_runs WHERE task = ? AND finished = 1", arguments: [task])
            }
            if rows.count >= count || Clock.now() > deadline { return rows.compactMap(Record.init(data:)) }
            usleep(5_000)
        }
    }

    static func storePath(_ agentDirectory: String) -> String { agentDirectory + "/.agent/data/agent.sqlite" }

    /// A measurement counts the runs in its agent's store: one an earlier measurement left
    /// there would be counted too (and its times taken), so the folder must have none.
    static func requireFreshStore(_ agentDirectory: String) throws {
        guard !FileManager.default.fileExists(atPath: storePath(agentDirectory)) else {
            throw BenchError("\(agentDirectory) already holds an agent's store from an earlier measurement; each measurement needs a folder of its own (Kind.label)")
        }
    }

    /// Waits until the agent answers `status` on its control socket.
    /// Starts an agent from `settings` in a folder of its own and waits for its control socket;
    /// a build that refuses the settings with a line mentioning `refusalMentioning` (one without
    /// the feature measured) is not available rather than failed.
    static func startAgent(_ environment: BenchEnvironment, name: String, settings: String,
                           refusalMentioning: String) throws -> (ConsoleRun, String) {
        let file = try environment.writeAgent(name, settings: settings)
        let agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        do {
            try waitForControl(run, paths: AgentPaths(agentDirectory: agentDirectory))
        } catch {
            if run.exitStatus != nil, let refusal = run.lines.first(where: { $0.text.contains(refusalMentioning) })?.text {
                throw NotAvailable(description: refusal)
            }
            throw error
        }
        return (run, agentDirectory)
    }

    static func waitForControl(_ run: ConsoleRun, paths: AgentPaths) throws {
        let deadline = Clock.now() + 60
        var last = ""
        while Clock.now() < deadline {
            run.pump(maxWait: 0.02)
            if run.exitStatus != nil { break }
            do {
                if try ControlClient.send(["command": "status"], paths: paths, timeout: 5)["ok"]?.boolValue == true { return }
            } catch {
                last = "\(error)"
            }
        }
        if run.exitStatus != nil, let refusal = run.lines.first(where: { $0.text.contains("/tasks/") })?.text {
            // The settings were refused for a task: the type is not in this build's modules.
            throw NotAvailable(description: refusal)
        }
        throw BenchError("the agent did not answer on its control socket (\(last)); \(run.errors.prefix(3).joined(separator: " | "))")
    }

    static func stopAgent(_ run: ConsoleRun) {
        _ = run.stop(signal: SIGTERM, timeout: 20)
    }
}
