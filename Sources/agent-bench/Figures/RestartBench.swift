import AgentCore
import AgentRuntime
import Foundation

/// Figure 3: a worker's start, and its replacement after a crash with zero backoff, through
/// the real supervisor embedded in the bench.
enum RestartBench {
    static let crashes = 100

    static func run(_ environment: BenchEnvironment, logFD: Int32) -> Section {
        var section = Section(
            number: 3, title: "Worker start and restart",
            method: "one bench_idle process with \"restart\": {\"initial_delay\": 0, \"max_restarts\": null}, supervised by the real Supervisor inside the bench (main thread, the epoll loop driven by run(until:)). start → ready: from just before posix_spawn to the handling of the worker's ready frame (the worker has exec'd, loaded the Swift runtime, dlopen'ed libbench.so and started its threads). kill → ready: SIGKILL sent by the bench to the running worker, until the replacement's ready frame is handled; kill → respawned: until the end of the loop turn in which the supervisor reaped the old worker (pidfd) and spawned the new one (that turn also runs whatever else is due, e.g. the orphan sweep). stop: stop frame + SIGTERM until the worker is reaped.")
        let starts = environment.quick ? 10 : 30
        do {
            let agent = try EmbeddedAgent(environment: environment, name: "restart", settings: GeneratedSettings.idle(count: 1, zeroBackoff: true, store: false), logFD: logFD)
            let name = "idle0"
            var start = Samples()
            var stop = Samples()
            for _ in 0..<starts {
                let began = Clock.now()
                agent.supervisor.startAll()
                guard agent.run(timeout: 10, until: { agent.info(name)?.state == .running }) else {
                    throw BenchError("the worker did not become ready within 10 s (state \(agent.info(name)?.state.description ?? "?"))")
                }
                start.append((Clock.now() - began) * 1000)
                guard let stopped = agent.stopAll() else { throw BenchError("the worker did not stop within 15 s") }
                stop.append(stopped)
            }
            section.add(Figure("start → ready (posix_spawn to ready frame)", .milliseconds, samples: start))
            section.add(Figure("stop → reaped (stop frame + SIGTERM)", .milliseconds, samples: stop))

            agent.supervisor.startAll()
            guard agent.run(timeout: 10, until: { agent.info(name)?.state == .running }) else { throw BenchError("the worker did not start") }
            var respawned = Samples()
            var ready = Samples()
            let restartsBefore = agent.info(name)?.restarts ?? 0
            for crash in 0..<crashes {
                guard let pid = agent.info(name)?.pid, pid > 0 else { throw BenchError("no worker before crash \(crash)") }
                var spawnedAt = 0.0
                let killedAt = Clock.now()
                kill(pid, SIGKILL)
                let done = agent.run(timeout: 10) {
                    guard let info = agent.info(name) else { return false }
                    if spawnedAt == 0, info.pid != pid, info.pid > 0 { spawnedAt = Clock.now() }
                    return info.pid != pid && info.state == .running
                }
                guard done else {
                    throw BenchError("crash \(crash + 1): no ready replacement within 10 s (state \(agent.info(name)?.state.description ?? "?"))")
                }
                respawned.append((spawnedAt - killedAt) * 1000)
                ready.append((Clock.now() - killedAt) * 1000)
            }
            let restarts = (agent.info(name)?.restarts ?? 0) - restartsBefore
            if restarts != crashes { section.fail("\(crashes) crashes but \(restarts) restarts counted") }
            section.add(Figure("SIGKILL → respawned (end of that loop turn)", .milliseconds, samples: respawned))
            section.add(Figure("SIGKILL → replacement ready", .milliseconds, samples: ready,
                               note: "target < 10 ms; supervisord 1,021 ms, circus 799 ms"))
            if agent.stopAll() == nil { section.fail("the worker did not stop at the end") }
        } catch {
            section.fail("\(error)")
        }
        return section
    }
}
