import AgentCore
import AgentSupervision
import Foundation

/// Figure 3: a worker's start, and its replacement after a crash with zero backoff, through
/// the real supervisor embedded in the bench.
enum RestartBench {
    static let crashes = 100

    /// How long a replacement runs before the next crash: issue 8's reference workload is a
    /// worker that crashes 0.2 s after start, which also gives the supervisor time to make the
    /// module's warm spare.
    static let runBeforeCrash = 0.2
    /// Crashes whose kernel part is timed apart (a watching thread beside them).
    static let kernelCrashes = 20

    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 3, title: "Worker start and restart",
            method: "one bench_idle process with \"restart\": {\"initial_delay\": 0, \"max_restarts\": null} (the store off), supervised by the real Supervisor inside the bench (main thread, the epoll loop driven by run(until:)), its workers forked by a fork server (agent-worker --fork-server) as in agent-control, and, for comparison, by a second supervisor without one (posix_spawn of agent-worker, as with AGENT_FORK_SERVER=0). start → ready: from just before the fork server's request (or posix_spawn) to the handling of the worker's ready frame (the worker has been forked (or exec'd and loaded the Swift runtime), dlopen'ed libbench.so and started its threads). stop: stop frame + SIGTERM until the worker is reaped. Crashes: SIGKILL sent by the bench \(runBeforeCrash) s after the worker (or its replacement) became ready, as in issue 8's reference workload; → ready: until the replacement's ready frame is handled; → respawned: until the end of the loop turn in which the supervisor reaped the old worker (pidfd) and started the new one (that turn also runs whatever else is due, e.g. the orphan sweep). After a crash the supervisor keeps a warm spare worker for the module (spawned once the replacement is ready, the module loaded, its rings mapped, its writer and reader threads and its exit reaper started, waiting for a start frame), which the next restart adopts; the first crash of a supervisor finds none, measured on a new supervisor each time.")
        let starts = environment.quick ? 10 : 30
        let firstCrashes = environment.quick ? 5 : 20
        let settings = GeneratedSettings.idle(count: 1, zeroBackoff: true, store: false)
        let name = "idle0"
        do {
            let agent = try EmbeddedAgent(environment: environment, name: "restart", settings: settings, logFD: logFD)
            let spawning = try EmbeddedAgent(environment: environment, name: "restart-spawn", settings: settings, logFD: logFD, forkServer: false)
            for (label, embedded) in [("forked by the fork server", agent), ("posix_spawn, no fork server", spawning)] {
                var start = Samples()
                var stop = Samples()
                for _ in 0..<starts {
                    let began = Clock.now()
                    embedded.supervisor.startAll()
                    guard embedded.run(timeout: 10, until: { embedded.info(name)?.state == .running }) else {
                        throw BenchError("the worker did not become ready within 10 s (state \(embedded.info(name)?.state.description ?? "?"))")
                    }
                    start.append((Clock.now() - began) * 1000)
                    guard let stopped = embedded.stopAll() else { throw BenchError("the worker did not stop within 15 s") }
                    stop.append(stopped)
                }
                section.add(Figure("start → ready, \(label)", .milliseconds, samples: start))
                section.add(Figure("  stop → reaped (stop frame + SIGTERM)", .milliseconds, samples: stop))
            }

            // First crashes: a new supervisor each time, so that no spare exists yet.
            for forked in [true, false] {
                var cold = Samples()
                for index in 0..<firstCrashes {
                    let fresh = try EmbeddedAgent(environment: environment, name: "restart-first-\(forked)-\(index)", settings: settings, logFD: logFD, forkServer: forked)
                    fresh.supervisor.startAll()
                    guard fresh.run(timeout: 10, until: { fresh.info(name)?.state == .running }) else { throw BenchError("the worker did not start") }
                    cold.append(try crash(fresh, name: name, after: runBeforeCrash).ready)
                    if fresh.stopAll() == nil { section.fail("the worker did not stop after its first crash") }
                }
                section.add(Figure("first crash: SIGKILL → replacement ready, \(forked ? "forked" : "posix_spawn")", .milliseconds, samples: cold,
                                   note: forked ? "no spare yet: a fork of the fork server, dlopen" : "no spare yet: exec, dynamic linking, dlopen"))
            }

            let restarts = try warmSpareRestarts(agent, name: name, count: crashes, logFD: logFD)
            if restarts.counted != crashes { section.fail("\(crashes) crashes but \(restarts.counted) restarts counted") }
            section.add(Figure("SIGKILL → respawned (end of that loop turn)", .milliseconds, samples: restarts.respawned))
            section.add(Figure("SIGKILL → replacement ready", .milliseconds, samples: restarts.ready,
                               note: "\(restarts.adopted) of \(crashes) adopted a warm spare; target < 10 ms (issue 38: ≤ 1 ms p50); supervisord 1,021 ms, circus 799 ms"))
            // Where a restart's time goes, from the supervisor's own times of each step.
            for (index, label) in Restart.stepLabels.enumerated() {
                section.add(Figure(label, .milliseconds, samples: restarts.steps[index]))
            }
            try Self.addKernelSplit(to: &section, agent: agent, name: name, environment: environment)
            if agent.stopAll() == nil { section.fail("the worker did not stop at the end") }
            // The same without the workers' exit reapers: their address space is torn down
            // inside their own exit, before the pidfd wakes the loop.
            let unreaped = try EmbeddedAgent(environment: environment, name: "restart-unreaped", settings: settings, logFD: logFD,
                                             workerEnvironment: ["AGENT_WORKER_EXIT_REAPER": "0"])
            let without = try warmSpareRestarts(unreaped, name: name, count: crashes / 2, logFD: logFD)
            section.add(Figure("SIGKILL → replacement ready, no exit reaper (AGENT_WORKER_EXIT_REAPER=0)", .milliseconds, samples: without.ready,
                               note: "\(without.adopted) of \(crashes / 2) adopted a warm spare; the kernel frees the worker's memory before its death is seen"))
            section.add(Figure(Restart.stepLabels[0] + ", no exit reaper", .milliseconds, samples: without.steps[0]))
            if unreaped.stopAll() == nil { section.fail("the worker without an exit reaper did not stop at the end") }
        } catch {
            section.fail("\(error)")
        }
        return section
    }

    /// What `count` crashes of a running worker gave, each replaced by a warm spare where one
    /// is ready (the first finds none): the samples, the adoptions the log shows and the
    /// restarts the supervisor counted.
    struct Restarts {
        var respawned = Samples()
        var ready = Samples()
        var steps = [Samples](repeating: Samples(), count: 4)
        var adopted = 0
        var counted = 0
    }

    static func warmSpareRestarts(_ agent: EmbeddedAgent, name: String, count: Int, logFD: Int32) throws -> Restarts {
        agent.supervisor.startAll()
        guard agent.run(timeout: 10, until: { agent.info(name)?.state == .running }) else { throw BenchError("the worker did not start") }
        var result = Restarts()
        let restartsBefore = agent.info(name)?.restarts ?? 0
        let sparesBefore = Self.occurrences(of: ", a warm spare)", inFile: logFD)
        for crash in 0..<count {
            do {
                let restart = try Self.crash(agent, name: name, after: runBeforeCrash)
                result.respawned.append(restart.respawned)
                result.ready.append(restart.ready)
                for (index, step) in restart.steps.enumerated() { result.steps[index].append(step) }
            } catch {
                throw BenchError("crash \(crash + 1): \(error)")
            }
        }
        result.adopted = Self.occurrences(of: ", a warm spare)", inFile: logFD) - sparesBefore
        result.counted = (agent.info(name)?.restarts ?? 0) - restartsBefore
        return result
    }

    /// One restart as the bench saw it (milliseconds from the SIGKILL) and its steps as the
    /// supervisor timed them.
    struct Restart {
        /// Until the bench saw the replacement's pid (the end of the loop turn that started it).
        var respawned: Double
        /// Until the bench saw the replacement running (the end of the turn that handled its ready frame).
        var ready: Double
        /// SIGKILL → reaped, reaped → started (spare adopted), started → ready frame handled,
        /// ready handled → seen by the bench: in the order of ``stepLabels``.
        var steps: [Double]
        /// SIGKILL → the exit complete as the bench's watch saw it (with `watchExit`).
        var exited: Double? = nil

        static let stepLabels = [
            "  step: SIGKILL → old worker reaped (the kernel ends it, its pidfd wakes the loop)",
            "  step: reaped → replacement started (spare adopted, rings, start frame queued)",
            "  step: started → its ready frame handled (start frame written, the worker starts, ready read)",
            "  step: ready handled → seen (the rest of that loop turn)",
        ]
    }

    /// The first step split: on more crashes, a thread of the bench waits on the worker's pidfd
    /// (``ExitWatch``), so the kernel's part (SIGKILL → exit complete) is timed apart from the
    /// loop's (→ reaped). Not on the crashes above: the watch's wake-up competes with the
    /// loop's. Beside it two floors: the same for `/bin/sleep`, the least a process can be, and
    /// for a spare worker that never started (the worker's libraries mapped, none of its threads).
    static func addKernelSplit(to section: inout Section, agent: EmbeddedAgent, name: String, environment: BenchEnvironment) throws {
        var kernel = Samples()
        var loop = Samples()
        var floor = Samples()
        var spare = Samples()
        for _ in 0..<kernelCrashes {
            let restart = try Self.crash(agent, name: name, after: runBeforeCrash, watchExit: true)
            guard let exited = restart.exited else { throw BenchError("the killed worker's pidfd never turned readable") }
            kernel.append(exited)
            loop.append(restart.steps[0] - exited)
            if let bare = ExitWatch.bareProcessFloor() { floor.append(bare) }
            if let idle = ExitWatch.spareWorkerFloor(environment) { spare.append(idle) }
        }
        section.add(Figure("    of it, the kernel: SIGKILL → exit complete (\(kernelCrashes) more crashes, a thread of the bench waiting on the pidfd)", .milliseconds, samples: kernel))
        section.add(Figure("    of it, the loop: exit complete → reaped (on those crashes)", .milliseconds, samples: loop))
        section.add(Figure("  floor: SIGKILL → exit complete of /bin/sleep (the same watch)", .milliseconds, samples: floor,
                           note: "the kernel ending a process that has one thread and no memory to speak of"))
        section.add(Figure("  floor: SIGKILL → exit complete of a spare worker, exec'd and waiting (the same watch)", .milliseconds, samples: spare,
                           note: "agent-worker --spare: the Swift runtime, Foundation and the module loaded, one thread; the kernel unmapping the libraries' pages is most of it"))
    }

    /// Lets the running worker run for `seconds`, kills it, and drives the loop until its
    /// replacement is ready; with `watchExit`, also times the kernel's part (``ExitWatch``).
    static func crash(_ agent: EmbeddedAgent, name: String, after seconds: Double, watchExit: Bool = false) throws -> Restart {
        let until = Clock.now() + seconds
        agent.run(timeout: seconds) { Clock.now() >= until }
        guard let pid = agent.info(name)?.pid, pid > 0, agent.info(name)?.state == .running else {
            throw BenchError("no running worker to kill (state \(agent.info(name)?.state.description ?? "?"))")
        }
        var spawnedAt = 0.0
        let watch = watchExit ? ExitWatch(pid: pid) : nil
        let killedAt = Clock.now()
        kill(pid, SIGKILL)
        var last: SupervisedProcessInfo?
        let done = agent.run(timeout: 10) {
            guard let info = agent.info(name) else { return false }
            last = info
            if spawnedAt == 0, info.pid != pid, info.pid > 0 { spawnedAt = Clock.now() }
            return info.pid != pid && info.state == .running
        }
        let seenAt = Clock.now()
        guard done, let info = last else {
            throw BenchError("no ready replacement within 10 s (state \(agent.info(name)?.state.description ?? "?"))")
        }
        let times = [killedAt, info.reapedAt, info.spawnedAt, info.readyAt, seenAt]
        return Restart(respawned: (spawnedAt - killedAt) * 1000, ready: (seenAt - killedAt) * 1000,
                       steps: (1..<times.count).map { (times[$0] - times[$0 - 1]) * 1000 },
                       exited: watch?.exited().map { ($0 - killedAt) * 1000 })
    }

    /// How often `text` occurs in the file open as `fd` (the embedded supervisor's log).
    static func occurrences(of text: String, inFile fd: Int32) -> Int {
        guard let log = ProcFiles.read("/proc/self/fd/\(fd)") else { return 0 }
        return log.components(separatedBy: text).count - 1
    }
}
