import AgentCore
import AgentRuntime
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

        section.note("AgentRuntime tasks: not yet available in this build (the command runner and the module task handlers of issue 21 are not on this commit): no figure for the runtime; targets from the issue: module task request → started p50 < \(Target.moduleP50) ms and p99 < \(Target.moduleP99) ms, ≥ 10,000 module task runs/s persisted; command task p50 < \(Target.commandP50) ms — not measured.")

        measureBaselines(environment, loads: loads, into: &section)
        return section
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
