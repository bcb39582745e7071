#if Fleet
import AgentBase
import AgentFleet
import AgentWork
import Foundation
import JSONSchema
import Logging

/// Figure 13: a fleet on one PostgreSQL (issue 26). Claimed-and-completed no-op runs/s with
/// 1, 2 and 4 agents (real `agent-control console`s), queued → claimed one run at a time with
/// the runs that waited for the poll, and an agent's kill -9 → its runs resumed on another;
/// procrastinate with 1, 2 and 4 workers on the same server in the same run.
enum FleetBench {
    /// The issue's targets.
    enum Target {
        static let runsPerSecondWithFour = 5_000.0
        static let claimP99 = 10.0
    }

    /// Seconds between polls, for the agents and procrastinate alike (procrastinate's default):
    /// a wakeup lost shows as a wait of up to this long.
    static let poll = 5.0
    /// A run claimed this late counts as one that waited for the poll (with a 5 s poll, a lost
    /// wakeup waits 0–5 s: most show; a run this late for another reason counts too).
    static let pollWait = 0.25
    /// The no-op task's concurrency per agent, and procrastinate's per worker.
    static let concurrency = 16
    /// The rescue measurement's lease.
    static let rescueLease = 3.0

    static func run(_ environment: BenchEnvironment) -> Section {
        let quick = environment.quick
        let burst = quick ? 5_000 : 20_000
        let warmup = quick ? 200 : 1_000
        let latencyRuns = quick ? 200 : 1_000
        var section = Section(
            number: 13, title: "A fleet on one PostgreSQL: claimed-and-completed runs/s with 1, 2 and 4 agents, claim latency, kill -9 → resumed, against procrastinate",
            method: """
            The bench starts Debian's PostgreSQL itself (initdb into a folder of its own, the server as its child on a free loopback port, \
            fsync and synchronous_commit on, shared_buffers 256MB), one database per measurement. AgentRuntime: 1, 2 or 4 real \
            `agent-control console`s with "fleet" in their settings (poll \(Int(poll)) s, lease 30 s) and a no-op module task (bench.noop, \
            max_concurrent \(concurrency)); the bench queues runs into the shared queue itself (PostgresRunStore.queue: one INSERT of the \
            whole batch in one transaction, so the agents are woken once and never see part of it). Burst: \(TableRenderer.grouped(warmup)) \
            runs to warm up, then N = \(TableRenderer.grouped(burst)) at once; runs/s = N / (the last run's ended_at − the bench's clock \
            right before the INSERT), every run checked succeeded at its first attempt. Then \(TableRenderer.grouped(latencyRuns)) runs one at \
            a time, each queued after the previous ended: queued → claimed = the run's started_at (the server's clock in the claiming \
            statement) − the bench's clock right before its INSERT (so it includes the INSERT's commit and its fsync); a run claimed \
            ≥ \(pollWait) s late counts as one that waited for the poll. procrastinate (3.10.0 from PyPI into the scratch folder) on the \
            same server: 1, 2 or 4 `procrastinate worker` processes, concurrency \(concurrency), fetch polling interval \(Int(poll)) s, an async \
            no-op task; the same burst (batch_defer_async: one transaction) and one-at-a-time phases: jobs/s = N / (the last `succeeded` \
            event − right before the defer); deferred → started = the job's `started` event − right before its defer. kill -9: agent A \
            (lease \(Int(rescueLease)) s, renewed every third of it) holds 4 runs of a command task that sleeps; agent B has room for them; \
            the bench kills A with SIGKILL and reads when B started the runs' second attempts (started_at) − the kill.
            """)
        let server: BenchPostgres
        do {
            server = try BenchPostgres()
        } catch {
            section.fail("PostgreSQL: \(error)")
            return section
        }
        defer { server.stop() }
        section.note("server: \(server.version)")
        // AGENT_BENCH_FLEET_AGENTS="4": only these sizes (profiling one of them).
        let sizes = ProcessInfo.processInfo.environment["AGENT_BENCH_FLEET_AGENTS"].map { $0.split(separator: ",").compactMap { Int($0) } } ?? [1, 2, 4]
        for agents in sizes {
            do {
                let result = try measureAgents(environment, server: server, agents: agents, burst: burst, warmup: warmup, latencyRuns: latencyRuns)
                let target = agents == 4 ? String(format: "; target ≥ %@ /s: %@", TableRenderer.grouped(Int(Target.runsPerSecondWithFour)),
                                                  result.perSecond >= Target.runsPerSecondWithFour ? "met" : "NOT met") : ""
                section.add(Figure("AgentRuntime, \(agents) agent\(agents == 1 ? "" : "s"): claimed-and-completed runs/s", .perSecond,
                                   median: result.perSecond, count: burst,
                                   note: String(format: "N = %@ in %.2f s%@", TableRenderer.grouped(burst), result.seconds, target)))
                section.add(Figure("  queued → claimed, one at a time", .milliseconds, samples: result.claimed,
                                   note: String(format: "target p99 < %.0f ms: %@; waited for the poll (≥ %.2f s): %d of %d", Target.claimP99,
                                                result.claimed.p99 < Target.claimP99 ? "met" : "NOT met", pollWait, result.pollWaits, result.claimed.count)))
                section.add(Figure("  queued → handler started", .milliseconds, samples: result.handler, note: "the handler's started_ns"))
            } catch {
                section.fail("\(agents) agent(s): \(error)")
            }
        }
        if sizes == [1, 2, 4] || ProcessInfo.processInfo.environment["AGENT_BENCH_FLEET_ROUTING"] != nil {
            measureRouting(environment, server: server, into: &section)
        }
        measureRescue(environment, server: server, repetitions: quick ? 1 : 3, into: &section)
        if ProcessInfo.processInfo.environment["AGENT_BENCH_NO_BASELINES"] == nil {
            measureProcrastinate(environment, server: server, burst: burst, warmup: warmup, latencyRuns: latencyRuns, into: &section)
        }
        // The same number of agents and of procrastinate's workers, on the same server.
        for agents in sizes {
            let procrastinate = section.figures.first { $0.label.hasPrefix("procrastinate, \(agents) worker") && $0.label.hasSuffix(": completed jobs/s") }
            if let procrastinate { section.compare("AgentRuntime, \(agents) agent\(agents == 1 ? "" : "s"): claimed-and-completed runs/s", with: procrastinate.label) }
        }
        return section
    }

    struct AgentsResult {
        var perSecond: Double
        var seconds: Double
        var claimed = Samples()
        var handler = Samples()
        var pollWaits = 0
    }

    /// A store of the bench's own on `database` (it applies the migrations, so the agents
    /// start on a ready schema).
    static func connect(_ server: BenchPostgres, database: String, publish: [String] = []) throws -> PostgresFleetStore {
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}", "agent_id": "agent-bench",
                               "publish": .array(publish.map { .string($0) })]
        guard let settings = try FleetSettings(json, environment: ["PGPASSWORD": server.password]) else { throw BenchError("no fleet settings") }
        var logger = Logger(label: "agent-bench.fleet")
        logger.logLevel = .error
        let quiet = logger
        return try StoreWait.result(timeout: 60) { try await PostgresFleetStore.connect(settings, logger: quiet) }
    }

    /// Starts an agent of the fleet `database`: its console and its folder.
    static func startAgent(_ environment: BenchEnvironment, server: BenchPostgres, database: String, id: String, lease: Double,
                           tasks: String) throws -> ConsoleRun {
        let settings = """
            {"enabled_modules": ["bench"], "processes": {},
             "fleet": {"postgres": "\(server.url(database: database))", "password": "${env:PGPASSWORD}", "agent_id": "\(id)",
                       "lease": \(lease), "heartbeat": 5, "poll": \(poll)},
             "tasks": \(tasks)}
            """
        let file = try environment.writeAgent("fleet-\(database)-\(id)", settings: settings)
        let agentDirectory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let run = try ConsoleRun(environment: environment, settingsFile: file, extraEnvironment: ["PGPASSWORD": server.password])
        try AgentTaskBench.waitForControl(run, paths: AgentPaths(agentDirectory: agentDirectory))
        return run
    }

    static func noopRun(_ index: Int, input: JSONValue = .object([:])) -> TaskRun {
        TaskRun(id: "bench-\(index)-\(UUID().uuidString.prefix(8).lowercased())", task: "noop", input: input, requestedBy: .cli)
    }

    /// Waits until no run of `task` is unfinished, pumping the agents' logs; fails on an agent
    /// that exited (the caller checks how each run ended). It asks for the unfinished runs'
    /// count: counting every run's status (the table's whole) took 47 ms of the server's time
    /// per look with 21,000 runs, a third of a core taken from the agents under measurement.
    static func waitDrained(_ store: PostgresFleetStore, task: String, agents: [ConsoleRun], timeout: Double) throws {
        let deadline = Clock.now() + timeout
        while Clock.now() < deadline {
            for agent in agents { agent.pump(maxWait: 0) }
            if let exited = agents.first(where: { $0.exitStatus != nil }) {
                throw BenchError("an agent exited: \(exited.errors.prefix(3).joined(separator: " | "))")
            }
            if try StoreWait.result({ try await store.runs.unfinishedCount(task: task) }) == 0 { return }
            usleep(100_000)
        }
        let counts = try StoreWait.result { try await store.runs.statusCounts(task: task) }
        throw BenchError("runs of \(task) still unfinished after \(Int(timeout)) s: \(counts)")
    }

    static func measureAgents(_ environment: BenchEnvironment, server: BenchPostgres, agents count: Int, burst: Int, warmup: Int,
                              latencyRuns: Int) throws -> AgentsResult {
        let database = "fleet\(count)"
        try server.createDatabase(database)
        let store = try connect(server, database: database)
        defer { store.close() }
        let tasks = #"{"noop": {"type": "bench.noop", "max_concurrent": \#(concurrency)}}"#
        var agents: [ConsoleRun] = []
        defer { for agent in agents { AgentTaskBench.stopAgent(agent) } }
        for index in 0..<count {
            agents.append(try startAgent(environment, server: server, database: database, id: "agent-\(index + 1)", lease: 30, tasks: tasks))
        }
        let warm = (0..<warmup).map { noopRun($0) }
        try StoreWait.result(timeout: 120) { try await store.runs.queue(warm) }
        try waitDrained(store, task: "noop", agents: agents, timeout: 120)
        if let wrong = try StoreWait.result({ try await store.runs.statusCounts(task: "noop") }).first(where: { $0.key != "succeeded" }) {
            throw BenchError("\(wrong.value) warm-up run(s) ended \(wrong.key)")
        }

        let runs = (0..<burst).map { noopRun(warmup + $0) }
        let ids = Set(runs.map(\.id))
        if BenchPostgres.profiling { server.resetStatements(database: database) }
        let first = Double(Clock.realtimeNanoseconds()) / 1e9
        try StoreWait.result(timeout: 120) { try await store.runs.queue(runs) }
        try waitDrained(store, task: "noop", agents: agents, timeout: 60 + Double(burst) / 100)
        if BenchPostgres.profiling { Progress.say("\(count) agent(s), the burst's statements:\n" + server.statements(database: database)) }
        let stored = try StoreWait.result(timeout: 120) { try await store.runs.list(RunFilter(task: "noop", limit: warmup + burst + 10)).map(\.run) }
        let measured = stored.filter { ids.contains($0.id) }
        guard measured.count == burst else { throw BenchError("\(measured.count) of \(burst) burst runs read back") }
        if let wrong = measured.first(where: { $0.status != .succeeded || $0.attempt != 1 }) {
            throw BenchError("run \(wrong.id) ended \(wrong.status.rawValue) at attempt \(wrong.attempt): each should succeed at its first")
        }
        guard let last = measured.compactMap(\.endedAt).max() else { throw BenchError("the burst's runs have no ended_at") }
        var result = AgentsResult(perSecond: Double(burst) / (last - first), seconds: last - first)

        for index in 0..<latencyRuns {
            let sent = Clock.realtimeNanoseconds()
            let run = noopRun(warmup + burst + index, input: ["sent_ns": .number(JSONNumber(Int(sent)))])
            try StoreWait.result { try await store.runs.queue([run]) }
            let deadline = Clock.now() + 60
            var finished: TaskRun?
            while finished == nil {
                for agent in agents { agent.pump(maxWait: 0) }
                if let found = try StoreWait.result({ try await store.runs.run(id: run.id) }), found.status.isFinished { finished = found }
                if finished == nil {
                    guard Clock.now() < deadline else { throw BenchError("run \(run.id) did not end within 60 s") }
                    usleep(2_000)
                }
            }
            guard let done = finished, done.status == .succeeded, let started = done.startedAt,
                  let handler = done.output?["started_ns"]?.numberValue?.doubleValue else {
                throw BenchError("run \(run.id) did not succeed with its times: \(finished?.json.serialized().prefix(300) ?? "")")
            }
            let claimed = started * 1000 - Double(sent) / 1e6
            result.claimed.append(claimed)
            result.handler.append((handler - Double(sent)) / 1e6)
            if claimed >= pollWait * 1000 { result.pollWaits += 1 }
        }
        return result
    }

    /// The routing cost of fleet mode (issue 26: "none: local events never touch the database
    /// unless published"): figure 4's routing — 100 B events, datasource → supervisor → monitor,
    /// the store off — in the bench's own supervisor without and with the fleet's database
    /// (connected as `"fleet"` gives it, publishing one event type the source does not emit, so
    /// that every event stays local), alternating, in the same run.
    static func measureRouting(_ environment: BenchEnvironment, server: BenchPostgres, into section: inout Section) {
        let load = RoutingBench.Load(label: "100 B", count: environment.quick ? 200_000 : 1_000_000, payloadBytes: 100, rate: 0)
        let repetitions = environment.quick ? 1 : 3
        let logFD = open(environment.scratch + "/fleet-routing.log", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(logFD) }
        var local = Samples(), fleet = Samples(), cpuLocal = Samples(), cpuFleet = Samples()
        do {
            try server.createDatabase("routing")
            let store = try connect(server, database: "routing", publish: ["fleet_bench_not_emitted"])
            defer { store.close() }
            let microseconds = Double(load.count) * 1000
            for repetition in 1...repetitions {
                let without = try RoutingBench.throughSupervisor(environment, load, logFD: logFD)
                let with = try RoutingBench.throughSupervisor(environment, load, logFD: logFD, fleet: store)
                for (outcome, label) in [(without, "without"), (with, "with")] where !outcome.problems.isEmpty {
                    section.fail("routing \(label) \"fleet\", run \(repetition) of \(repetitions): " + outcome.problems.joined(separator: "; "))
                }
                local.append(without.result.throughput)
                fleet.append(with.result.throughput)
                cpuLocal.append(Double(without.cpu.supervisor) / microseconds)
                cpuFleet.append(Double(with.cpu.supervisor) / microseconds)
            }
            let events = store.events.figures
            if events.published + events.backlog != 0 {
                section.fail("routing with \"fleet\": \(events.published + events.backlog) events went to the database, none should")
            }
        } catch {
            section.fail("routing without and with \"fleet\": \(error)")
            return
        }
        section.add(Figure("routing 100 B (figure 4), without \"fleet\"", .eventsPerSecond, samples: local,
                           note: "\(TableRenderer.grouped(load.count)) events per run, the store off"))
        section.add(Figure("  the same with \"fleet\" (the source's type not published)", .eventsPerSecond, samples: fleet,
                           note: String(format: "ratio with / without of the medians %.2f; target: no cost", fleet.median / local.median)))
        section.add(Figure("  CPU per event: supervisor, without \"fleet\"", .microseconds, samples: cpuLocal))
        section.add(Figure("  CPU per event: supervisor, with \"fleet\"", .microseconds, samples: cpuFleet))
    }

    /// Agent A holds 4 runs; B has room; A is killed: kill → B started the last of them.
    static func measureRescue(_ environment: BenchEnvironment, server: BenchPostgres, repetitions: Int, into section: inout Section) {
        var resumed = Samples()
        let marker = "agent-bench-hold-\(getpid())"
        defer { killMarked(marker) }
        for repetition in 0..<repetitions {
            do {
                let database = "rescue\(repetition + 1)"
                try server.createDatabase(database)
                let store = try connect(server, database: database)
                defer { store.close() }
                let tasks = #"{"hold": {"type": "command", "command": ["/bin/sh", "-c", "sleep 60 # \#(marker)"], "max_concurrent": 4, "retries": {"max": 0}}}"#
                let a = try startAgent(environment, server: server, database: database, id: "a", lease: rescueLease, tasks: tasks)
                defer { AgentTaskBench.stopAgent(a) }
                let runs = (0..<4).map { TaskRun(id: "hold-\($0)-\(UUID().uuidString.prefix(8).lowercased())", task: "hold", requestedBy: .cli) }
                try StoreWait.result { try await store.runs.queue(runs) }
                let held = Clock.now() + 30
                while try StoreWait.result({ try await store.runs.statusCounts(task: "hold") })["running", default: 0] < 4 {
                    a.pump(maxWait: 0)
                    guard Clock.now() < held else { throw BenchError("agent A did not take the 4 runs within 30 s") }
                    usleep(10_000)
                }
                let b = try startAgent(environment, server: server, database: database, id: "b", lease: rescueLease, tasks: tasks)
                defer { AgentTaskBench.stopAgent(b) }
                let killed = Double(Clock.realtimeNanoseconds()) / 1e9
                kill(a.pid, SIGKILL)
                let deadline = Clock.now() + 60
                var latest: Double?
                while latest == nil {
                    a.pump(maxWait: 0)
                    b.pump(maxWait: 0)
                    let current = try StoreWait.result { try await store.runs.list(RunFilter(task: "hold", limit: 10)).map(\.run) }
                    if current.count == 4, current.allSatisfy({ $0.attempt == 2 && $0.status == .running }) {
                        latest = current.compactMap(\.startedAt).max()
                    }
                    guard latest == nil else { break }
                    guard Clock.now() < deadline else {
                        throw BenchError("the killed agent's runs were not resumed within 60 s: \(current.map { "\($0.id) \($0.status.rawValue) \($0.attempt)" })")
                    }
                    usleep(5_000)
                }
                resumed.append((latest! - killed) * 1000)
            } catch {
                section.fail("kill -9 → resumed, repetition \(repetition + 1): \(error)")
            }
        }
        guard !resumed.isEmpty else { return }
        let target = (rescueLease + 1) * 1000
        section.add(Figure("AgentRuntime: kill -9 of an agent → its 4 runs resumed on another", .milliseconds, samples: resumed,
                           note: String(format: "lease %.0f s; target lease + < 1 s (< %.0f ms): %@", rescueLease, target,
                                        resumed.max < target ? "met" : "NOT met")))
    }

    /// The killed agent's commands (sleeps) outlive it: ended here, found by their marker.
    static func killMarked(_ marker: String) {
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), let data = FileManager.default.contents(atPath: "/proc/\(entry)/cmdline") else { continue }
            if String(decoding: data, as: UTF8.self).contains(marker) { kill(pid, SIGKILL) }
        }
    }

    static func measureProcrastinate(_ environment: BenchEnvironment, server: BenchPostgres, burst: Int, warmup: Int, latencyRuns: Int,
                                     into section: inout Section) {
        let driver: ProcrastinateDriver
        do {
            driver = try ProcrastinateDriver(environment: environment)
        } catch {
            section.fail("procrastinate: \(error)")
            return
        }
        var version: String?
        for workers in [1, 2, 4] {
            do {
                let database = "procrastinate\(workers)"
                try server.createDatabase(database)
                let output = try driver.run(dsn: server.dsn(database: database), workers: workers, concurrency: concurrency, poll: poll,
                                            burst: burst, latencyJobs: latencyRuns, warmup: warmup)
                version = output.version
                for problem in output.errors { section.fail("procrastinate, \(workers) worker(s): \(problem)") }
                let label = "procrastinate, \(workers) worker\(workers == 1 ? "" : "s") × concurrency \(concurrency)"
                if let throughput = output.throughput {
                    if throughput.completed != throughput.jobs {
                        section.fail("\(label): \(throughput.completed) of \(throughput.jobs) jobs succeeded")
                    }
                    section.add(Figure("\(label): completed jobs/s", .perSecond, median: Double(throughput.jobs) / throughput.seconds,
                                       count: throughput.jobs,
                                       note: String(format: "N = %@ in %.2f s; the issue's reference: 364–554 /s", TableRenderer.grouped(throughput.jobs),
                                                    throughput.seconds)))
                }
                if let latencies = output.latency_ns, !latencies.isEmpty {
                    var samples = Samples()
                    for value in latencies { samples.append(Double(value) / 1e6) }
                    let waits = latencies.filter { Double($0) >= pollWait * 1e9 }.count
                    section.add(Figure("  deferred → started, one at a time", .milliseconds, samples: samples,
                                       note: String(format: "waited for the poll (≥ %.2f s): %d of %d; the issue's reference: p50 1.6 ms", pollWait, waits,
                                                    samples.count)))
                }
            } catch {
                section.fail("procrastinate, \(workers) worker(s): \(error)")
            }
        }
        if let version { section.note("baseline: \(version)") }
    }
}
#endif
