import AgentCore
import AgentWork
import Foundation

/// Figure 10: a no-op task — request → started (p50, p99) and completed runs per second — for
/// the runtime's tasks, against the floor of a command (a bare posix_spawn + wait of
/// /bin/true) and against Celery (Redis broker, solo pool) and RQ (SimpleWorker and the
/// default forking Worker) with a no-op Python task, in the same run.
enum TaskBench {
    /// The issue's targets.
    enum Target {
        static let moduleP50 = 0.2
        static let moduleP99 = 1.0
        static let moduleRunsPerSecond = 10_000.0
        static let commandP50 = 1.05
    }

    static func run(_ environment: BenchEnvironment) -> Section {
        let quick = environment.quick
        let loads = [
            TaskQueueDriver.Load(system: "celery", latencyTasks: quick ? 300 : 2_000, burst: quick ? 1_000 : 5_000, warmup: quick ? 100 : 500),
            TaskQueueDriver.Load(system: "rq-simple", latencyTasks: quick ? 200 : 1_000, burst: quick ? 500 : 5_000, warmup: quick ? 50 : 200),
            TaskQueueDriver.Load(system: "rq-fork", latencyTasks: quick ? 50 : 300, burst: quick ? 100 : 1_000, warmup: quick ? 5 : 20),
        ]
        let floorCount = quick ? 500 : 2_000
        var section = Section(
            number: 10, title: "Tasks: a no-op task, request → started and completed runs/s, against Celery and RQ",
            method: "The floor of a command: the bench itself spawns /bin/true with the runtime's spawn (ProcessSpawner → agent_spawn: posix_spawn with its fds, a fresh signal mask and a process group of its own, as the command runner does) and waits for it, \(TableRenderer.grouped(floorCount)) times one after another after 100 to warm up (monotonic clock; spawn → reaped). Baselines, same run: Debian's redis-server (installed with apt-get if missing) on a free loopback port without persistence (--save \"\" --appendonly no), and \(TaskQueueDriver.requirements.joined(separator: " and ")) from PyPI in a virtual environment in the scratch folder; a Python driver (written into the scratch folder) starts the worker — Celery: `celery worker -P solo -c 1` (no result backend, --without-gossip --without-mingle --without-heartbeat); RQ: `rq worker -w rq.worker.SimpleWorker`, and the default `rq.worker.Worker`, which forks a work horse per job (RQ keeps each job and its result in Redis) — warms it up, then (1) enqueues one no-op task at a time, each carrying its enqueue time (time.time_ns(), CLOCK_REALTIME, taken right before the enqueue call) in its argument; the task's body takes its start time with the same clock first, then pushes both to a Redis list the driver waits on before the next enqueue: enqueue → start = start − enqueue; (2) enqueues a burst of N tasks as fast as it can (these report nothing), then a sentinel task that reports (one worker, one queue: it runs after them): completed tasks/s = N / (sentinel's report − first enqueue); every task of the burst is checked completed (Celery: a counter in the worker's process; RQ: each job's status in Redis). Warm-up and N: \(loads.map { "\($0.system) \($0.warmup), \(TableRenderer.grouped($0.latencyTasks)) one at a time, N = \(TableRenderer.grouped($0.burst))" }.joined(separator: "; ")).")
        let load = MachineLoad.sample()
        section.note(String(format: "machine busy just before this figure: %.0f %% of all cores (1 s sample of /proc/stat)", load.busyPercent)
                     + (load.strays.isEmpty ? "" : "; running, not started by the bench: " + load.strays.joined(separator: ", ")))

        let floor = SpawnFloor.run(count: floorCount, warmup: 100)
        for failure in floor.failures { section.fail("floor: \(failure)") }
        if !floor.latencies.isEmpty {
            section.add(Figure("floor: posix_spawn + wait of /bin/true", .milliseconds, samples: floor.latencies,
                               note: "the issue's reference: 0.52 ms p50"))
            section.add(Figure("  spawns + waits one after another", .perSecond, median: floor.perSecond, count: 1))
        }

        measureAgent(environment, floorP50: floor.latencies.isEmpty ? nil : floor.latencies.median, into: &section)
        measureExecutors(environment, into: &section)
        LargeInputBench.measure(environment, into: &section)

        // AGENT_BENCH_NO_BASELINES set: the runtime's figures alone (comparing two builds of it).
        if ProcessInfo.processInfo.environment["AGENT_BENCH_NO_BASELINES"] == nil {
            measureBaselines(environment, loads: loads, into: &section)
        }
        for kind in ["AgentRuntime module task (bench.noop)", "AgentRuntime command task (/bin/true)"] {
            section.compare("\(kind): request → started", with: "floor: posix_spawn + wait of /bin/true", "Celery, solo pool: enqueue → task start",
                            "RQ, SimpleWorker: enqueue → task start", "RQ, default Worker (fork per job): enqueue → task start")
        }
        return section
    }

    /// The runtime's side: the module task and the command task, each one at a time, then in
    /// a burst. A kind this build cannot run yet is said so, with the agent's words.
    static func measureAgent(_ environment: BenchEnvironment, floorP50: Double?, into section: inout Section) {
        let quick = environment.quick
        let module = AgentTaskBench.Kind(task: "noop", definition: #"{"type": "bench.noop", "max_concurrent": 16}"#, startFromOutput: true,
                                         latencyRuns: quick ? 300 : 2_000, latencyWarmup: 100,
                                         burst: quick ? 5_000 : 20_000, burstWarmup: quick ? 200 : 1_000)
        let command = AgentTaskBench.Kind(task: "true", definition: #"{"type": "command", "command": ["/bin/true"], "max_concurrent": 4}"#,
                                          startFromOutput: false, latencyRuns: quick ? 300 : 2_000, latencyWarmup: 100,
                                          burst: quick ? 1_000 : 5_000, burstWarmup: quick ? 50 : 200)
        section.note("AgentRuntime: agent-control console (the real binary, the store on), one agent per measurement. Runs requested one at a time over the control socket: task_run with \"wait\": true and the input {\"sent_ns\": CLOCK_REALTIME right before the request}, as `agent-control task run NAME --input … --wait` sends it, the next after the answer; read back from the store once committed. A burst through an `on_event` trigger, as a user would feed tasks from events: a bench_task_source process in the same agent emits a warm-up, pauses 1 s, then N bench_task events as fast as it can (each with its emit time, CLOCK_REALTIME, in the payload), each a run with the event as its input; runs/s persisted = N / (when the bench saw the last run committed as succeeded in the store, polled every 2 ms on a read-only connection − the first burst event's emit time). Warm-up and N: module task \(module.latencyWarmup), \(TableRenderer.grouped(module.latencyRuns)) one at a time, \(TableRenderer.grouped(module.burstWarmup)) + N = \(TableRenderer.grouped(module.burst)) (max_concurrent 16); command task \(command.latencyWarmup), \(TableRenderer.grouped(command.latencyRuns)), \(command.burstWarmup) + N = \(TableRenderer.grouped(command.burst)) (max_concurrent 4).")
        measure(environment, module, into: &section, started: "in the handler's body (its output's started_ns)",
                targets: "module task request → started p50 < 0.2 ms and p99 < 1 ms, ≥ 10,000 runs/s persisted") { latency in
            let met = latency.started.median < Target.moduleP50 && latency.started.p99 < Target.moduleP99
            return String(format: "target p50 < %.1f ms, p99 < %.0f ms: %@", Target.moduleP50, Target.moduleP99, met ? "met" : "NOT met")
        } burstNote: { burst in
            String(format: "target ≥ 10,000 /s: %@", burst.perSecond >= Target.moduleRunsPerSecond ? "met" : "NOT met")
        } endedNote: { _ in nil }
        measure(environment, command, into: &section, started: "the run's started_at in the store (the coordinator hands it to the runner)",
                targets: "command task p50 < 1.05 ms") { _ in
            nil
        } burstNote: { _ in nil } endedNote: { latency in
            String(format: "target p50 < %.2f ms%@: %@", Target.commandP50,
                   floorP50.map { String(format: " (2 × this run's floor: %.2f ms)", 2 * $0) } ?? "", latency.completed.median < Target.commandP50 ? "met" : "NOT met")
        }
    }

    /// Executors (issue 24): the assignment decision's cost with 100 executors, per strategy,
    /// and the no-op burst through 4 executor replicas against 1.
    static func measureExecutors(_ environment: BenchEnvironment, into section: inout Section) {
        let decisions = environment.quick ? 200_000 : 1_000_000
        section.note("Executors: the assignment decision in the bench's own process (AssignmentBenchmark, the supervisor's code): 100 executors taking the task, max_concurrent 4 each, half full; each decision chooses an executor for a run (priorities in turn), counts the run on it and ends a random running run, \(TableRenderer.grouped(decisions)) decisions after a tenth as many to warm up, timed as a whole (monotonic clock). The burst: the module task's on_event burst above, with its runs assigned to a process of type executor with replicas 1 or 4 (max_concurrent 4 each; each replica runs the handler in a worker of its own, pool#N:noop).")
        for strategy in AssignmentStrategy.allCases {
            let nanoseconds = AssignmentBenchmark.nanosecondsPerDecision(executors: 100, decisions: decisions, strategy: strategy)
            section.add(Figure("assignment decision, 100 executors, \(strategy.rawValue)", .microseconds, median: nanoseconds / 1000, count: decisions))
        }
        for replicas in [1, 4] {
            let kind = AgentTaskBench.Kind(task: "noop", definition: #"{"type": "bench.noop", "max_concurrent": 16}"#, startFromOutput: true,
                                           latencyRuns: 0, latencyWarmup: 0, burst: environment.quick ? 5_000 : 20_000,
                                           burstWarmup: environment.quick ? 200 : 1_000,
                                           processes: #", "pool": {"type": "executor", "replicas": \#(replicas), "max_concurrent": 4, "tasks": {"noop": {}}}"#,
                                           label: "-executors-\(replicas)")
            do {
                let burst = try AgentTaskBench.burst(environment, kind)
                section.add(Figure("AgentRuntime module task through \(replicas) executor replica\(replicas == 1 ? "" : "s"): runs/s persisted", .perSecond,
                                   median: burst.perSecond, count: burst.runs,
                                   note: String(format: "N = %@ in %.2f s; runs per replica: %@", TableRenderer.grouped(burst.runs), burst.seconds,
                                                burst.byExecutor.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", "))))
            } catch {
                section.fail("executor replicas \(replicas), burst: \(error)")
            }
        }
    }

    static func measure(_ environment: BenchEnvironment, _ kind: AgentTaskBench.Kind, into section: inout Section, started: String, targets: String,
                        startedNote: (AgentTaskBench.Latency) -> String?, burstNote: (AgentTaskBench.Burst) -> String?,
                        endedNote: (AgentTaskBench.Latency) -> String?) {
        let label = kind.startFromOutput ? "AgentRuntime module task (bench.noop)" : "AgentRuntime command task (/bin/true)"
        do {
            let latency = try AgentTaskBench.latency(environment, kind)
            section.add(Figure("\(label): request → started", .milliseconds, samples: latency.started,
                               note: ["started = \(started)", startedNote(latency)].compactMap { $0 }.joined(separator: "; ")))
            section.add(Figure("  request → ended", .milliseconds, samples: latency.completed,
                               note: ["the run's ended_at in the store", endedNote(latency)].compactMap { $0 }.joined(separator: "; ")))
        } catch let error as AgentTaskBench.NotAvailable {
            section.note("\(label): not available in this build (no figure; the issue's target, \(targets): not measured): \(error.description)")
            return
        } catch {
            section.fail("\(label), one at a time: \(error)")
        }
        do {
            let burst = try AgentTaskBench.burst(environment, kind)
            section.add(Figure("  runs/s persisted (on_event burst)", .perSecond, median: burst.perSecond, count: burst.runs,
                               note: [String(format: "N = %@ in %.2f s", TableRenderer.grouped(burst.runs), burst.seconds), burstNote(burst)]
                                   .compactMap { $0 }.joined(separator: "; ")))
        } catch {
            section.fail("\(label), burst: \(error)")
        }
    }

    static func measureBaselines(_ environment: BenchEnvironment, loads: [TaskQueueDriver.Load], into section: inout Section) {
        let driver: TaskQueueDriver
        let redis: RedisServer
        do {
            driver = try TaskQueueDriver(environment: environment)
            redis = try RedisServer(folder: environment.folder("redis"))
        } catch {
            section.fail("baselines: \(error)")
            return
        }
        defer { redis.stop() }
        section.note("baselines: \(redis.version)")
        let references = [
            "celery": ("Celery, solo pool", "the issue's reference: 0.93 ms p50, 1.49 ms p99", "the issue's reference: about 1,080 /s"),
            "rq-simple": ("RQ, SimpleWorker", "the issue's reference: 2.5 ms", "the issue's reference: 225 /s"),
            "rq-fork": ("RQ, default Worker (fork per job)", "the issue's reference: 10.7 ms", "the issue's reference: 68 /s"),
        ]
        var versions: [String] = []
        defer { if !versions.isEmpty { section.note("baselines: " + versions.joined(separator: "; ")) } }
        for load in loads {
            let (label, latencyNote, rateNote) = references[load.system] ?? (load.system, "", "")
            let output: TaskQueueOutput
            do {
                output = try driver.run(load, redisURL: redis.url)
            } catch {
                section.fail("\(label): \(error)")
                continue
            }
            for problem in output.problems { section.fail("\(label): \(problem)") }
            if !versions.contains(output.version) { versions.append(output.version) }
            let latencies = output.latencies
            if !latencies.isEmpty {
                section.add(Figure("\(label): enqueue → task start", .milliseconds, samples: latencies, note: latencyNote))
            }
            if let throughput = output.throughput {
                section.add(Figure("  completed tasks/s", .perSecond, median: throughput.perSecond, count: throughput.completed,
                                   note: String(format: "N = %@ in %.2f s (enqueued in %.2f s); %@", TableRenderer.grouped(throughput.tasks),
                                                throughput.seconds, throughput.enqueueSeconds, rateNote)))
            }
        }
    }
}
