import AgentCore
import AgentSupervision
import Foundation

/// Figure 8: from launching `agent-control console` to ready workers, and stopping them.
enum ColdStartBench {
    static let workers = 20

    /// The launch with the HTTP server on (`"http": {"listen": "127.0.0.1:0", …}`), in the same
    /// agent folder (the manifest cache filled): what starting NIO and the API adds.
    static func measureWithHTTP(_ environment: BenchEnvironment, settingsFolder: String, into section: inout Section) throws {
        let file = settingsFolder + "/settings-http.json"
        try GeneratedSettings.idle(count: workers, http: HTTPBench.httpSettings).write(toFile: file, atomically: true, encoding: .utf8)
        let (firstReady, allReady) = try launches(environment, file: file, count: environment.quick ? 2 : 5, what: "http on")
        section.add(Figure("launch → first worker ready, http on", .milliseconds, samples: firstReady,
                           note: "target ≤ 15 ms; the HTTP server listening (settings \"http\")"))
        section.add(Figure("launch → \(workers) workers ready, http on", .milliseconds, samples: allReady, note: "target ≤ 40 ms"))
    }

    /// `count` launches of `file`, each stopped with SIGTERM: launch → first and → all workers ready.
    static func launches(_ environment: BenchEnvironment, file: String, extraEnvironment: [String: String] = [:], count: Int,
                         what: String) throws -> (first: Samples, all: Samples) {
        var first = Samples()
        var all = Samples()
        for _ in 0..<count {
            let run = try ConsoleRun(environment: environment, settingsFile: file, extraEnvironment: extraEnvironment)
            guard run.wait(timeout: 30, until: { run.readyTimes.count >= workers }) else {
                throw BenchError("\(what): \(run.readyTimes.count) of \(workers) workers ready after 30 s; \(run.errors.prefix(3).joined(separator: " | "))")
            }
            first.append((run.readyTimes[0] - run.launchedAt) * 1000)
            all.append((run.readyTimes[workers - 1] - run.launchedAt) * 1000)
            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
            guard stopped != nil, left.isEmpty else { throw BenchError("\(what), SIGTERM: \(left.count) worker(s) left after 20 s") }
        }
        return (first, all)
    }

    /// Launches with `AGENT_FORK_SERVER_BIND_NOW=1`, each right after a default one: the fork
    /// server's loader binds every symbol at its start, so that forked workers inherit them bound.
    struct BoundAtLoad {
        var firstReady = Samples()
        var allReady = Samples()
        var workerCPU = Samples()
        /// The first launch that failed: the figure's other rows stand without this one's.
        var failure: String?

        /// One launch; a failure is kept (the next launches are skipped), not thrown.
        mutating func launchUnlessFailed(_ environment: BenchEnvironment, file: String) {
            guard failure == nil else { return }
            do { try launch(environment, file: file) } catch { failure = "\(error)" }
        }

        private mutating func launch(_ environment: BenchEnvironment, file: String) throws {
            let run = try ConsoleRun(environment: environment, settingsFile: file, extraEnvironment: [ForkServer.bindNowKey: "1"])
            guard run.wait(timeout: 30, until: { run.readyTimes.count >= workers }) else {
                throw BenchError("AGENT_FORK_SERVER_BIND_NOW=1: \(run.readyTimes.count) of \(workers) workers ready after 30 s; \(run.errors.prefix(3).joined(separator: " | "))")
            }
            firstReady.append((run.readyTimes[0] - run.launchedAt) * 1000)
            allReady.append((run.readyTimes[workers - 1] - run.launchedAt) * 1000)
            for pid in run.workerPids { workerCPU.append(Double(ProcFiles.cpuNanoseconds(of: pid)) / 1e6) }
            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
            guard stopped != nil, left.isEmpty else { throw BenchError("AGENT_FORK_SERVER_BIND_NOW=1, SIGTERM: \(left.count) worker(s) left after 20 s") }
        }

        func add(to section: inout Section) {
            if let failure { return section.fail("server bound at load: \(failure)") }
            section.add(Figure("launch → first worker ready, server bound at load", .milliseconds, samples: firstReady,
                               note: "AGENT_FORK_SERVER_BIND_NOW=1, each launch right after a default one: the server's load binds every library's symbols"))
            section.add(Figure("launch → \(workers) workers ready, server bound at load", .milliseconds, samples: allReady))
            section.add(Figure("  CPU of each worker, server bound at load", .milliseconds, samples: workerCPU,
                               note: "no symbol left for the worker to bind at its first call"))
        }
    }

    /// The loads on the first ready's path, in the same run: what is left to the launch's own work.
    static func addFloor(_ environment: BenchEnvironment, firstReady: Samples, into section: inout Section) throws {
        let floor = try StartFloor.run(environment, count: environment.quick ? 5 : 15)
        section.add(Figure("floor: agent-control --version, spawn → reaped", .milliseconds, samples: floor.control,
                           note: "its load and the Swift runtime's start; nothing of the agent's"))
        section.add(Figure("floor: agent-worker --version, spawn → reaped", .milliseconds, samples: floor.worker,
                           note: "the fork server's load: the toolchain's Foundation and runtime, which every module links"))
        section.add(Figure("floor: both at once", .milliseconds, samples: floor.both,
                           note: String(format: "side by side from the start, which a launch cannot do (agent-control spawns the server once it runs): a lower bound; first ready − this: %.1f ms (medians)",
                                        firstReady.median - floor.both.median)))
        section.compare("launch → first worker ready", with: "floor: both at once")
    }

    static func run(_ environment: BenchEnvironment) -> Section {
        var section = Section(
            number: 8, title: "Cold start and stop: agent-control console with \(workers) workers",
            method: "posix_spawn of agent-control console --no-build --quiet on a settings file of \(workers) bench_idle processes, until its log line \"[…] ready in\" for the first and for the \(workers)th worker reaches the bench (agent-control reads the settings, learns the module's manifest — from its cache in <agent>/.agent/cache, or through one agent-worker --describe when the cache has none —, validates, and has its fork server fork the workers, one per loop turn). The first rows have the manifest cache filled by an earlier launch, as every launch after the first; \"no manifest cache\": the cache file deleted before each launch. stop = SIGTERM until every worker and agent-control have exited; SIGKILL = agent-control killed, until every worker is gone (PR_SET_PDEATHSIG; the fork server must go too, or it counts as an orphan). Default settings (the store on), and the launch again with the store off and with the HTTP server on (cache filled); each default launch is followed by one with AGENT_FORK_SERVER_BIND_NOW=1 (\"server bound at load\": the fork server is started with LD_BIND_NOW, so its loader binds every library's symbols before it serves, and forked workers inherit them bound). floor, same run: posix_spawn of agent-control --version and of agent-worker --version (the fork server's program), each alone and both at once, until reaped, alternated: the loads that lie on the first worker's path before any work of the agent's.")
        let repetitions = environment.quick ? 3 : 7
        let coldRepetitions = environment.quick ? 1 : 3
        var cold = (firstReady: Samples(), allReady: Samples())
        var firstSpawned = Samples()
        var firstReady = Samples()
        var allReady = Samples()
        var stop = Samples()
        var workerCPU = Samples()
        var supervisorCPU = Samples()
        var bound = BoundAtLoad()
        do {
            let file = try environment.writeAgent("cold-\(workers)", settings: GeneratedSettings.idle(count: workers))
            let cache = URL(fileURLWithPath: file).deletingLastPathComponent().path + "/.agent/cache/manifests.json"
            // The launches without a manifest cache first; the first of them fills it for the others.
            for index in 0..<(coldRepetitions + repetitions) {
                let withoutCache = index < coldRepetitions
                if withoutCache { try? FileManager.default.removeItem(atPath: cache) }
                let run = try ConsoleRun(environment: environment, settingsFile: file)
                guard run.wait(timeout: 30, until: { run.readyTimes.count >= workers }) else {
                    throw BenchError("\(run.readyTimes.count) of \(workers) workers ready after 30 s; \(run.errors.prefix(3).joined(separator: " | "))")
                }
                if withoutCache {
                    cold.firstReady.append((run.readyTimes[0] - run.launchedAt) * 1000)
                    cold.allReady.append((run.readyTimes[workers - 1] - run.launchedAt) * 1000)
                    let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
                    guard stopped != nil, left.isEmpty else { throw BenchError("SIGTERM: \(left.count) worker(s) left after 20 s") }
                    continue
                }
                firstSpawned.append((run.startTimes[0] - run.launchedAt) * 1000)
                firstReady.append((run.readyTimes[0] - run.launchedAt) * 1000)
                allReady.append((run.readyTimes[workers - 1] - run.launchedAt) * 1000)
                for pid in run.workerPids { workerCPU.append(Double(ProcFiles.cpuNanoseconds(of: pid)) / 1e6) }
                supervisorCPU.append(Double(ProcFiles.cpuNanoseconds(of: run.pid)) / 1e6)
                let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
                guard let stopped, left.isEmpty else { throw BenchError("SIGTERM: \(left.count) worker(s) left after 20 s") }
                stop.append(stopped)
                bound.launchUnlessFailed(environment, file: file)
            }
            section.add(Figure("launch → first worker spawned", .milliseconds, samples: firstSpawned))
            section.add(Figure("launch → first worker ready", .milliseconds, samples: firstReady,
                               note: "target ≤ 15 ms (issue 38); live-agent 216, circus 181, supervisord 1,130"))
            section.add(Figure("launch → \(workers) workers ready", .milliseconds, samples: allReady,
                               note: "target ≤ 40 ms (issue 38); live-agent 360, circus 352, supervisord 1,271"))
            section.add(Figure("  CPU of each worker, start → ready", .milliseconds, samples: workerCPU,
                               note: "all threads; why \(workers) starts on 2 cores take this long"))
            section.add(Figure("  CPU of agent-control, launch → all ready", .milliseconds, samples: supervisorCPU))
            bound.add(to: &section)
            section.add(Figure("launch → first worker ready, no manifest cache", .milliseconds, samples: cold.firstReady,
                               note: "+ one agent-worker --describe"))
            section.add(Figure("launch → \(workers) workers ready, no manifest cache", .milliseconds, samples: cold.allReady))
            do {
                try addFloor(environment, firstReady: firstReady, into: &section)
            } catch {
                section.fail("the start's floor: \(error)")
            }
            section.add(Figure("SIGTERM → none left (\(workers) workers)", .milliseconds, samples: stop,
                               note: "target < 50 ms; circus 150, supervisord 7,000–12,000"))

            // The same launch with the store off: what opening the store adds.
            var offSpawned = Samples()
            var offAllReady = Samples()
            var offCPU = Samples()
            // In the same agent folder, so that the manifest cache is the same (filled).
            let offFile = URL(fileURLWithPath: file).deletingLastPathComponent().path + "/settings-no-store.json"
            try GeneratedSettings.idle(count: workers, store: false).write(toFile: offFile, atomically: true, encoding: .utf8)
            for _ in 0..<(environment.quick ? 2 : 5) {
                let run = try ConsoleRun(environment: environment, settingsFile: offFile)
                guard run.wait(timeout: 30, until: { run.readyTimes.count >= workers }) else {
                    throw BenchError("store off: \(run.readyTimes.count) of \(workers) workers ready after 30 s")
                }
                offSpawned.append((run.startTimes[0] - run.launchedAt) * 1000)
                offAllReady.append((run.readyTimes[workers - 1] - run.launchedAt) * 1000)
                offCPU.append(Double(ProcFiles.cpuNanoseconds(of: run.pid)) / 1e6)
                let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
                guard stopped != nil, left.isEmpty else { throw BenchError("store off, SIGTERM: \(left.count) worker(s) left after 20 s") }
            }
            section.add(Figure("launch → first worker spawned, store off", .milliseconds, samples: offSpawned,
                               note: "settings \"store\": {\"enabled\": false}"))
            section.add(Figure("launch → \(workers) workers ready, store off", .milliseconds, samples: offAllReady))
            section.add(Figure("  CPU of agent-control, store off", .milliseconds, samples: offCPU))

            try measureWithHTTP(environment, settingsFolder: URL(fileURLWithPath: file).deletingLastPathComponent().path, into: &section)

            // The same launch without the fork server: every worker exec'd.
            let (spawnedFirst, spawnedAll) = try launches(environment, file: file, extraEnvironment: ["AGENT_FORK_SERVER": "0"],
                                                          count: environment.quick ? 2 : 5, what: "no fork server")
            section.add(Figure("launch → first worker ready, no fork server", .milliseconds, samples: spawnedFirst,
                               note: "AGENT_FORK_SERVER=0: every worker started with posix_spawn"))
            section.add(Figure("launch → \(workers) workers ready, no fork server", .milliseconds, samples: spawnedAll))

            var killed = Samples()
            var orphans = 0
            for _ in 0..<(environment.quick ? 1 : 3) {
                let run = try ConsoleRun(environment: environment, settingsFile: file)
                guard run.wait(timeout: 30, until: { run.readyTimes.count >= workers }) else { throw BenchError("workers not ready for the SIGKILL run") }
                // Workers of a killed agent-control are reaped by init, out of the bench's
                // accounting of its descendants' CPU: counted here instead.
                section.unreapedCPUSeconds += Double(run.workerPids.reduce(Int64(0)) { $0 + ProcFiles.cpuNanoseconds(of: $1) }) / 1e9
                let server = ProcFiles.forkServer(of: run.pid)
                let zygotes = server.map(ProcFiles.children(of:)) ?? []
                let (gone, left) = run.stop(signal: SIGKILL, timeout: 5)
                orphans += left.count
                // The fork server dies with agent-control too (its parent-death signal), and
                // its zygotes with it (theirs).
                for pid in (server.map { [$0] } ?? []) + zygotes {
                    let deadline = Clock.now() + 5
                    while ProcFiles.isAlive(pid), Clock.now() < deadline { usleep(1000) }
                    if ProcFiles.isAlive(pid) { orphans += 1 }
                }
                if let gone { killed.append(gone) }
            }
            section.add(Figure("SIGKILL of agent-control → no worker left", .milliseconds, samples: killed,
                               note: "orphans: \(orphans)"))
            if orphans > 0 { section.fail("\(orphans) worker(s) outlived a SIGKILLed agent-control") }
        } catch {
            section.fail("\(error)")
        }
        return section
    }
}
