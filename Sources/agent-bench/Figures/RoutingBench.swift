import AgentCore
import AgentStore
import AgentSupervision
import AgentWork
import Foundation

/// Figure 4: events from a datasource worker through the supervisor to a monitor worker,
/// against the same frames over a bare socketpair, measured in the same run.
enum RoutingBench {
    /// One configuration: how many events, how big, how fast.
    struct Load {
        var label: String
        var count: Int
        var payloadBytes: Int
        var rate: Double
    }

    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 4, title: "Event routing: datasource → supervisor → monitor (store off)",
            method: "bench_source emits numbered `bench` events (JSON payload of the stated size; host stamps CLOCK_REALTIME at emit, extrapolated with the TSC between reads at most 1 ms apart) in its worker; the real Supervisor inside the bench (without a store; figure 5 adds it) routes them to bench_sink in a second worker (its queue set to \"when_full\": \"block\", so that a sink that falls behind pauses the source instead of losing events), which reads them with `for await event in context.events`, checks count and order, and measures latency = receipt time − emit stamp (counted in buckets 1/64 of a power of two wide, so p50 and p99 read at most 1.6 % high; the maximum is exact). throughput = events / (last receipt − first emit). baseline, same run: the bench itself sends the same event frames (stamped by the same function, batched in 64 KiB writes, or paced the same way) over a bare socketpair to a child process that decodes them and measures the same way — one hop, no supervisor, no SDK. bare relay, same run: the same frames through a third process between the bench and the receiver, which writes whatever it reads from one socketpair to a second one at once, unparsed (`agent-bench --child socket-relay`) — two hops and three processes, as through the supervisor, with no work at the middle: the floor of any design that puts a process between two workers. Also in the same run: the same routing with the HTTP server on (settings \"http\": {\"listen\": \"127.0.0.1:0\", \"tokens\": […]}: Hummingbird listening in the bench process, no client; each repetition runs it right after the one without), and with AGENT_SHARED_RINGS=0 (events to and from the workers on their sockets instead of the emit and delivery rings in shared memory), and with AGENT_WORKER_EVENT_WAIT=0 (the host offers no `wait_events`: the sink's code runs on the cooperative pool, resumed by the worker's reader thread when the supervisor's wake frame comes, as before stop 72; by default it runs on the worker's own thread, which sleeps on the delivery ring's word and is woken by the supervisor's publish itself). Each run is checked: count in = count out, in order, nothing dropped.")
        let repetitions = environment.quick ? 1 : 5
        let throughputLoads = [
            // Sustained rates: runs of about half a second or more through the supervisor. Shorter
            // ones measure the start too: 100,000 events took 15–50 ms, with buffers growing and
            // the first wakeups; 1,000,000 (0.2 s) still paid for the rings' first page faults
            // and the stamp clock's calibration (supervisor CPU per event 0.120 against 0.104 µs
            // over 3,000,000, in alternating runs).
            Load(label: "100 B", count: environment.quick ? 200_000 : 3_000_000, payloadBytes: 100, rate: 0),
            Load(label: "1 KiB", count: environment.quick ? 50_000 : 600_000, payloadBytes: 1024, rate: 0),
        ]
        var dropped = 0
        for load in throughputLoads {
            var routed = Samples()
            var emitted = Samples()
            var baseline = Samples()
            var relayed = Samples()
            var withoutRings = Samples()
            var withHTTP = Samples()
            var throughReader = Samples()
            var cpuThroughReader = Samples()
            var cpu = (supervisor: Samples(), source: Samples(), sink: Samples())
            var cpuWithHTTP = Samples()
            do {
                for repetition in 1...repetitions {
                    let outcome = try throughSupervisor(environment, load, logFD: logFD)
                    routed.append(outcome.result.throughput)
                    emitted.append(outcome.result.emitRate)
                    let microseconds = Double(load.count) * 1000
                    cpu.supervisor.append(Double(outcome.cpu.supervisor) / microseconds)
                    cpu.source.append(Double(outcome.cpu.source) / microseconds)
                    cpu.sink.append(Double(outcome.cpu.sink) / microseconds)
                    dropped += outcome.dropped
                    if !outcome.problems.isEmpty {
                        section.fail("throughput \(load.label), run \(repetition) of \(repetitions): " + outcome.problems.joined(separator: "; "))
                    }
                    let served = try throughSupervisor(environment, load, logFD: logFD, http: true)
                    withHTTP.append(served.result.throughput)
                    cpuWithHTTP.append(Double(served.cpu.supervisor) / microseconds)
                    dropped += served.dropped
                    if !served.problems.isEmpty {
                        section.fail("throughput \(load.label) with http on, run \(repetition) of \(repetitions): " + served.problems.joined(separator: "; "))
                    }
                    let pooled = try throughSupervisor(environment, load, logFD: logFD, workerEnvironment: Self.withoutEventWait)
                    throughReader.append(pooled.result.throughput)
                    cpuThroughReader.append(Double(pooled.cpu.sink) / microseconds)
                    dropped += pooled.dropped
                    if !pooled.problems.isEmpty {
                        section.fail("throughput \(load.label) with AGENT_WORKER_EVENT_WAIT=0, run \(repetition) of \(repetitions): " + pooled.problems.joined(separator: "; "))
                    }
                    baseline.append(try SocketBaseline.run(environment, count: load.count, payloadBytes: load.payloadBytes, rate: 0).throughput)
                    relayed.append(try SocketBaseline.run(environment, count: load.count, payloadBytes: load.payloadBytes, rate: 0, relay: true).throughput)
                    let socketsOnly = try throughSupervisor(environment, load, logFD: logFD, sharedRings: false)
                    withoutRings.append(socketsOnly.result.throughput)
                    dropped += socketsOnly.dropped
                    if !socketsOnly.problems.isEmpty {
                        section.fail("throughput \(load.label) without rings, run \(repetition) of \(repetitions): " + socketsOnly.problems.joined(separator: "; "))
                    }
                }
            } catch {
                section.fail("throughput \(load.label): \(error)")
            }
            guard !routed.isEmpty, !baseline.isEmpty else { continue }
            section.add(Figure("throughput \(load.label), through the supervisor", .eventsPerSecond, samples: routed,
                               note: "\(TableRenderer.grouped(load.count)) events per run; target ≥ 200,000 at 100 B"))
            section.add(Figure("  the source's emit rate meanwhile", .eventsPerSecond, samples: emitted))
            section.add(Figure("  CPU per event: supervisor", .microseconds, samples: cpu.supervisor))
            section.add(Figure("  CPU per event: source worker", .microseconds, samples: cpu.source))
            section.add(Figure("  CPU per event: sink worker", .microseconds, samples: cpu.sink))
            section.add(Figure("  the same, http on", .eventsPerSecond, samples: withHTTP,
                               note: String(format: "ratio http on / off of the medians %.2f; target: unchanged within noise", withHTTP.median / routed.median)))
            section.add(Figure("  CPU per event: supervisor, http on", .microseconds, samples: cpuWithHTTP))
            section.add(Figure("  the same, AGENT_WORKER_EVENT_WAIT=0", .eventsPerSecond, samples: throughReader,
                               note: "the sink's code on the cooperative pool, woken through the worker's reader thread (before stop 72)"))
            section.add(Figure("  CPU per event: sink worker, AGENT_WORKER_EVENT_WAIT=0", .microseconds, samples: cpuThroughReader))
            section.add(Figure("  the same, AGENT_SHARED_RINGS=0", .eventsPerSecond, samples: withoutRings,
                               note: "events on the workers' sockets: what the shared rings save"))
            section.add(Figure("throughput \(load.label), bare socketpair", .eventsPerSecond, samples: baseline))
            section.add(Figure("  ratio supervisor / socketpair, \(load.label)", .ratio, median: routed.median / baseline.median,
                               count: routed.count, note: "of the medians; target ≥ 0.5" + (load.payloadBytes == 100 ? " (issue 38: ≥ 1.0)" : "")))
            section.add(Figure("throughput \(load.label), bare relay", .eventsPerSecond, samples: relayed,
                               note: "socketpair → a process that copies → socketpair: two hops, three processes"))
            section.add(Figure("  ratio supervisor / relay, \(load.label)", .ratio, median: routed.median / relayed.median,
                               count: routed.count, note: "of the medians"))
            section.compare("throughput \(load.label), through the supervisor",
                            with: "throughput \(load.label), bare socketpair", "throughput \(load.label), bare relay")
        }
        if dropped > 0 {
            section.note("\(TableRenderer.grouped(dropped)) events were dropped by the supervisor, although the sink's queue blocks its producer when full.")
        }

        let seconds = environment.quick ? 2.0 : 5.0
        let latencyLoad = Load(label: "100 B at 10,000/s", count: Int(10_000 * seconds), payloadBytes: 100, rate: 10_000)
        do {
            let outcome = try throughSupervisor(environment, latencyLoad, logFD: logFD)
            if !outcome.problems.isEmpty { section.fail("latency run: " + outcome.problems.joined(separator: "; ")) }
            let routed = outcome.result
            let served = try throughSupervisor(environment, latencyLoad, logFD: logFD, http: true)
            if !served.problems.isEmpty { section.fail("latency run with http on: " + served.problems.joined(separator: "; ")) }
            let pooled = try throughSupervisor(environment, latencyLoad, logFD: logFD, workerEnvironment: Self.withoutEventWait)
            if !pooled.problems.isEmpty { section.fail("latency run with AGENT_WORKER_EVENT_WAIT=0: " + pooled.problems.joined(separator: "; ")) }
            let baseline = try SocketBaseline.run(environment, count: latencyLoad.count, payloadBytes: latencyLoad.payloadBytes, rate: latencyLoad.rate)
            let relayed = try SocketBaseline.run(environment, count: latencyLoad.count, payloadBytes: latencyLoad.payloadBytes, rate: latencyLoad.rate,
                                                 relay: true)
            section.add(latencyFigure("latency \(latencyLoad.label), through the supervisor", routed,
                                      note: "target p99 < 1 ms (issue 38: p99 ≤ 100 µs and ≤ 1.5 × the socketpair's)"))
            section.add(latencyFigure("  the same, http on", served.result, note: "right after the run above"))
            section.add(latencyFigure("  the same, AGENT_WORKER_EVENT_WAIT=0", pooled.result,
                                      note: "the sink woken through its reader thread and a pool thread (before stop 72)"))
            section.add(latencyFigure("latency \(latencyLoad.label), bare socketpair", baseline))
            section.add(ratioFigure("  ratio supervisor / socketpair, latency", routed, baseline))
            section.add(latencyFigure("latency \(latencyLoad.label), bare relay", relayed,
                                      note: "socketpair → a process that copies → socketpair: two wake-ups, as through the supervisor"))
            section.add(ratioFigure("  ratio supervisor / relay, latency", routed, relayed))
            section.compare("latency \(latencyLoad.label), through the supervisor",
                            with: "latency \(latencyLoad.label), bare socketpair", "latency \(latencyLoad.label), bare relay")
        } catch {
            section.fail("latency: \(error)")
        }
        return section
    }

    /// The workers' environment for the rows measured as before stop 72: an event reaches the
    /// sink's code through the worker's reader thread and a cooperative-pool thread.
    static let withoutEventWait = ["AGENT_WORKER_EVENT_WAIT": "0"]

    /// The latency of `result` over `baseline`'s, p50 in the median column and p99 in the p99 one.
    static func ratioFigure(_ label: String, _ result: RoutingResult, _ baseline: RoutingResult) -> Figure {
        Figure(label, .ratio, median: Double(result.latencyP50) / Double(max(1, baseline.latencyP50)),
               p99: Double(result.latencyP99) / Double(max(1, baseline.latencyP99)), count: 1, note: "p50 and p99 columns")
    }

    static func latencyFigure(_ label: String, _ result: RoutingResult, note: String? = nil) -> Figure {
        Figure(label, .microseconds, median: Double(result.latencyP50) / 1000, p99: Double(result.latencyP99) / 1000,
               max: Double(result.latencyMax) / 1000, count: result.count, note: note)
    }

    /// CPU time each process spent during a run, in nanoseconds.
    struct CPUTime {
        /// The whole supervisor process (the bench: its loop thread, the store's writer, the rest).
        var supervisor: Int64 = 0
        var source: Int64 = 0
        var sink: Int64 = 0
        /// The supervisor's loop thread alone (the bench's main thread).
        var loop: Int64 = 0
        /// The threads the store started (its writer); 0 without the store.
        var storeWriter: Int64 = 0
        /// The store's checkpoint thread (started once the WAL has grown; 0 before).
        var storeCheckpoint: Int64 = 0
    }

    /// Numbers the agent folders of the runs, so that each run starts with an empty store.
    nonisolated(unsafe) static var runNumber = 0

    /// What the store did during a run.
    struct StoreOutcome {
        var committed: Int
        var dropped: Int
        var batches: Int
        /// Wall-clock nanoseconds when the last event was committed (0: never).
        var allCommittedAt: Int64
        var databaseBytes: Int
        /// Events of the run found in the database afterwards (read-only connection).
        var rows: Int
    }

    /// What one run through the supervisor gave, and what went wrong in it.
    struct Outcome {
        var result: RoutingResult
        var cpu: CPUTime
        var store: StoreOutcome?
        var dropped: Int
        /// Lost, duplicated or reordered events, restarts: each makes the run a failure.
        var problems: [String]
    }

    /// One run through the supervisor, with the store on (in a new agent folder, so that every
    /// run starts with an empty database) or off; throws only if the sink reported nothing.
    static func throughSupervisor(_ environment: BenchEnvironment, _ load: Load, logFD: Int32, store withStore: Bool = false,
                                  sharedRings: Bool = true, http: Bool = false, fleet: (any FleetBackend)? = nil, legacyStore: Bool = false,
                                  workerEnvironment: [String: String] = [:]) throws -> Outcome {
        let settings = GeneratedSettings.routing(count: load.count, payloadBytes: load.payloadBytes, rate: load.rate, startDelay: 0.3,
                                                 store: withStore, http: http ? HTTPBench.httpSettings : nil)
        runNumber += 1
        let agent = try EmbeddedAgent(environment: environment,
                                      name: "routing-\(runNumber)" + (withStore ? "-store" : "") + (http ? "-http" : "") + (fleet != nil ? "-fleet" : ""),
                                      settings: settings, logFD: logFD, sharedRings: sharedRings, fleet: fleet, legacyStore: legacyStore,
                                      workerEnvironment: workerEnvironment)
        if withStore, agent.store == nil { throw BenchError("the store is on in the settings but was not opened") }
        if http, agent.http?.port == nil { throw BenchError("http is on in the settings but the server is not listening") }
        // Every event the source emits (the `bench` events and `bench_end`) is appended to the store.
        let total = load.count + 1
        var allCommittedAt: Int64 = 0
        func checkStore() {
            if allCommittedAt == 0, let store = agent.store, store.statistics.committed >= total {
                allCommittedAt = Clock.realtimeNanoseconds()
            }
        }
        agent.supervisor.startAll()
        // CPU is counted from both workers' ready (the source then waits start_delay) to the result.
        agent.run(timeout: 10) { agent.supervisor.snapshot.allSatisfy { $0.state == .running } }
        let pids = (source: agent.info("source")?.pid ?? 0, sink: agent.info("sink")?.pid ?? 0)
        let me = getpid()
        // The supervisor's loop runs on the bench's main thread; the store's writer on its own.
        func threadCPU(_ tids: [Int32]) -> Int64 { tids.reduce(0) { $0 + ProcFiles.cpuNanoseconds(of: me, thread: $1) } }
        var cpu = CPUTime(supervisor: -ProcFiles.cpuNanoseconds(of: me), source: -ProcFiles.cpuNanoseconds(of: pids.source),
                          sink: -ProcFiles.cpuNanoseconds(of: pids.sink), loop: -threadCPU([me]), storeWriter: -threadCPU(agent.storeThreads))
        let checkpointBefore = ProcFiles.cpuByThread(of: me, named: AgentStore.checkpointThreadName)
        var result: RoutingResult?
        let timeout = 30 + (load.rate > 0 ? Double(load.count) / load.rate : 0)
        // The condition runs between the loop's routing and its writes: keep it to a clock
        // read except every 5 ms, so that it adds nothing measurable to the latency.
        var nextCheck = 0.0
        agent.run(timeout: timeout) {
            let now = Clock.now()
            guard now >= nextCheck else { return false }
            nextCheck = now + 0.005
            checkStore()
            for message in agent.readMessages() where message.source == "sink" {
                result = RoutingResult(json: message.text)
            }
            return result != nil || agent.supervisor.snapshot.contains { $0.restarts > 0 || !$0.state.isLive }
        }
        // The store may still be writing when the sink has counted everything.
        let storeDeadline = Clock.now() + 60
        while result != nil, agent.store != nil, allCommittedAt == 0, Clock.now() < storeDeadline {
            checkStore()
            if allCommittedAt == 0 { usleep(500) }
        }
        cpu.supervisor += ProcFiles.cpuNanoseconds(of: me)
        cpu.source += ProcFiles.cpuNanoseconds(of: pids.source)
        cpu.sink += ProcFiles.cpuNanoseconds(of: pids.sink)
        cpu.loop += threadCPU([me])
        cpu.storeWriter += threadCPU(agent.storeThreads)
        cpu.storeCheckpoint = ProcFiles.cpuSpent(from: checkpointBefore, to: ProcFiles.cpuByThread(of: me, named: AgentStore.checkpointThreadName))
        let snapshot = agent.supervisor.snapshot
        let stopped = agent.stopAll()
        guard let result else {
            let states = snapshot.map { "\($0.name): \($0.state), \($0.restarts) restarts, \($0.lastExit ?? "")" }.joined(separator: "; ")
            throw BenchError("no result from the sink within \(Int(timeout)) s (\(states))")
        }
        let source = snapshot.first { $0.name == "source" }
        let sink = snapshot.first { $0.name == "sink" }
        let dropped = snapshot.reduce(0) { $0 + $1.eventsDropped }
        var problems: [String] = []
        if !result.isComplete {
            problems.append("the sink counted \(result.count) of \(result.expected) events (\(result.outOfOrder) gaps or reorderings)")
        }
        if source?.eventsEmitted != load.count + 1 { problems.append("the supervisor received \(source?.eventsEmitted ?? 0) of \(load.count + 1) events") }
        if dropped > 0 { problems.append("the supervisor dropped \(dropped) events") }
        if sink?.eventsDelivered != load.count + 1 - dropped {
            problems.append("the supervisor delivered \(sink?.eventsDelivered ?? 0) events, expected \(load.count + 1 - dropped)")
        }
        if snapshot.contains(where: { $0.restarts > 0 }) { problems.append("a worker restarted during the run") }
        if stopped == nil { problems.append("the workers did not stop afterwards") }
        var stored: StoreOutcome?
        if let store = agent.store {
            let statistics = store.statistics
            let bytes = ["", "-wal"].reduce(0) { sum, suffix in
                sum + (((try? FileManager.default.attributesOfItem(atPath: store.path + suffix))?[.size] as? Int) ?? 0)
            }
            var rows = -1
            do {
                rows = try StoreFile.countEvents(path: store.path, types: ["bench", "bench_end"])
            } catch {
                problems.append("cannot count the stored events: \(error)")
            }
            stored = StoreOutcome(committed: statistics.committed, dropped: statistics.dropped, batches: statistics.batches,
                                  allCommittedAt: allCommittedAt, databaseBytes: bytes, rows: rows)
            let emitted = source?.eventsEmitted ?? 0
            if statistics.committed != emitted { problems.append("the store committed \(statistics.committed) of \(emitted) events emitted") }
            if rows >= 0, rows != emitted { problems.append("the event log holds \(rows) of the \(emitted) events emitted") }
            if statistics.dropped > 0 { problems.append("the store dropped \(statistics.dropped) events") }
            if statistics.writeErrors > 0 { problems.append("the store had \(statistics.writeErrors) write errors") }
            if let degraded = statistics.degraded { problems.append("the store is degraded: \(degraded)") }
        }
        return Outcome(result: result, cpu: cpu, store: stored, dropped: dropped, problems: problems)
    }
}

extension ProcessState {
    /// Starting or running: the run can still complete.
    var isLive: Bool {
        switch self {
        case .starting, .running: true
        default: false
        }
    }
}
