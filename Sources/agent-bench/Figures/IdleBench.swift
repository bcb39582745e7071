import AgentCore
import AgentSupervision
import Foundation

/// Figure 6: what an idle agent costs — the supervisor's CPU with 20 and 100 idle workers,
/// and the memory of the supervisor and its workers.
enum IdleBench {
    static func run(_ environment: BenchEnvironment) -> Section {
        let seconds = environment.quick ? 5 : 30
        var section = Section(
            number: 6, title: "Idle cost",
            method: "agent-control console (the real binary, --quiet, default settings: the store on) running N bench_idle workers (each sleeps in Task.sleep until stopped). After all are ready and \(Int(steadySeconds)) s of settling (past the page releases and the store's first retention pass after the start, 10 s: the steady state), CPU time is read from /proc/PID/task/*/schedstat (ns, per thread; a thread that exits in a slice loses its last moments instead of taking its past off the sum) once per second for \(seconds) s: median and max of the 1-second slices, mean in the note. wakeups = voluntary context switches of the supervisor's threads, per second (in brackets: the main thread, which runs the loop, and the others). Memory from /proc/PID/smaps_rollup (RSS, and PSS, which shares each shared page among the processes that map it); http on: the same 20 workers with \"http\": {\"listen\": \"127.0.0.1:0\", \"tokens\": […]} (the HTTP server listening, no client), measured right after the run without it; then the supervisor's memory once more with the store off; then with AGENT_RELEASE_START_PAGES=0 (the code pages only the start touched stay mapped; by default agent-control unmaps the read-only segments — code and constants — of its executable and its libraries once every first start has settled, each worker its own 1 s after its ready frame and the fork server its own after 1 s without a request, and what each uses again is mapped again from the page cache). \"supervisor PSS: …\" rows: /proc/PID/smaps by mapping — the executable's code and constants (NIO, GRDB, the HTTP server, and the Swift runtime and Foundation are linked into it statically), its relocated data, SQLite, the C libraries, heap, stacks and anonymous memory (malloc arenas, SQLite's page cache), the shared rings, the store's files. Last, the 20 workers with AGENT_FORK_SERVER_BIND_NOW=1 (\"server bound at load\": the fork server's loader binds every library's symbols before it forks, so a worker writes no copy of a library's table of them).")
        // 20 workers without and with the HTTP server back to back, so that both see the same
        // phase of the machine; then 100.
        for (count, http) in [(20, false), (20, true), (100, false)] {
            do {
                try measure(environment, workers: count, seconds: seconds, http: http, into: &section)
            } catch {
                section.fail("\(count) workers\(http ? ", http on" : ""): \(error)")
            }
        }
        do {
            try memoryWithoutForkServer(environment, workers: 20, into: &section)
        } catch {
            section.fail("20 workers, no fork server: \(error)")
        }
        do {
            try memoryWithoutStore(environment, workers: 20, into: &section)
        } catch {
            section.fail("20 workers, store off: \(error)")
        }
        do {
            try memoryKeepingStartPages(environment, workers: 20, into: &section)
        } catch {
            section.fail("20 workers, start pages kept: \(error)")
        }
        do {
            try memoryBoundAtLoad(environment, workers: 20, into: &section)
        } catch {
            section.fail("20 workers, server bound at load: \(error)")
        }
        return section
    }

    /// The same agent with every worker started by posix_spawn (AGENT_FORK_SERVER=0): the
    /// baseline of what forking saves.
    static func memoryWithoutForkServer(_ environment: BenchEnvironment, workers count: Int, into section: inout Section) throws {
        let file = try environment.writeAgent("idle-\(count)-spawned", settings: GeneratedSettings.idle(count: count))
        let run = try ConsoleRun(environment: environment, settingsFile: file, extraEnvironment: ["AGENT_FORK_SERVER": "0"])
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= count }) else {
            throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
        }
        settle(run, seconds: steadySeconds)
        guard let supervisor = ProcFiles.memory(of: run.pid) else { throw BenchError("cannot read the supervisor's smaps_rollup") }
        let workerMemory = run.workerPids.compactMap(ProcFiles.memory(of:))
        guard workerMemory.count == count else { throw BenchError("read the memory of \(workerMemory.count) of \(count) workers") }
        section.add(Figure("worker PSS (each), no fork server", .megabytes, samples: Samples(workerMemory.map(\.pssMB)),
                           note: "AGENT_FORK_SERVER=0: every worker started with posix_spawn"))
        section.add(Figure("total PSS, supervisor + \(count) workers, no fork server", .megabytes,
                           median: supervisor.pssMB + workerMemory.reduce(0) { $0 + $1.pssMB }, count: 1))
        let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
        if stopped == nil || !left.isEmpty { section.fail("\(count) workers, no fork server: stop incomplete, \(left.count) worker(s) left") }
    }

    /// The supervisor's memory with the store off (settings "store": {"enabled": false}): what
    /// the store (SQLite, its page cache, the writer thread) adds to it.
    static func memoryWithoutStore(_ environment: BenchEnvironment, workers count: Int, into section: inout Section) throws {
        let file = try environment.writeAgent("idle-\(count)-no-store", settings: GeneratedSettings.idle(count: count, store: false))
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= count }) else {
            throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
        }
        settle(run, seconds: steadySeconds)
        guard let supervisor = ProcFiles.memory(of: run.pid) else { throw BenchError("cannot read the supervisor's smaps_rollup") }
        section.add(Figure("supervisor RSS, store off, \(count) workers", .megabytes, median: supervisor.rssMB, count: 1))
        section.add(Figure("supervisor PSS, store off, \(count) workers", .megabytes, median: supervisor.pssMB, count: 1,
                           note: "settings \"store\": {\"enabled\": false}"))
        let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
        if stopped == nil || !left.isEmpty { section.fail("\(count) workers, store off: stop incomplete, \(left.count) worker(s) left") }
    }

    /// The supervisor's memory by mapping (see `MemoryMap`): PSS of each part, RSS in the note.
    static func addParts(of pid: Int32, label: String?, into section: inout Section) {
        guard let map = MemoryMap(pid: pid) else { return section.fail("cannot read the supervisor's smaps") }
        for name in MemoryMap.order {
            guard let part = map.parts[name], part.rssKB > 0 else { continue }
            section.add(Figure("  supervisor PSS: \(name)\(label.map { ", \($0)" } ?? "")", .megabytes, median: Double(part.pssKB) / 1024, count: 1,
                               note: String(format: "RSS %.1f MB", Double(part.rssKB) / 1024)))
        }
    }

    /// The memory with AGENT_RELEASE_START_PAGES=0: the code pages that only the start touched
    /// stay mapped, in the supervisor, the fork server and the workers (what the release gives back).
    static func memoryKeepingStartPages(_ environment: BenchEnvironment, workers count: Int, into section: inout Section) throws {
        try memory(environment, workers: count, variant: "start pages kept", switch: ["AGENT_RELEASE_START_PAGES": "0"],
                   supervisorNote: "AGENT_RELEASE_START_PAGES=0", totalNote: "the workers and the fork server keep theirs too", into: &section)
    }

    /// The memory with AGENT_FORK_SERVER_BIND_NOW=1: the fork server binds every library's
    /// symbols at its load, so that no worker writes its own copy of a library's table of them.
    static func memoryBoundAtLoad(_ environment: BenchEnvironment, workers count: Int, into section: inout Section) throws {
        try memory(environment, workers: count, variant: "server bound at load", switch: [ForkServer.bindNowKey: "1"],
                   supervisorNote: nil, totalNote: "AGENT_FORK_SERVER_BIND_NOW=1: the workers share the server's bound tables", into: &section)
    }

    /// The steady memory of `count` idle workers with `variables` set: the workers' and the
    /// total's rows, and the supervisor's (with its parts) when `supervisorNote` says why.
    private static func memory(_ environment: BenchEnvironment, workers count: Int, variant: String, switch variables: [String: String],
                               supervisorNote: String?, totalNote: String, into section: inout Section) throws {
        let file = try environment.writeAgent("idle-\(count)-" + variant.replacingOccurrences(of: " ", with: "-"), settings: GeneratedSettings.idle(count: count))
        let run = try ConsoleRun(environment: environment, settingsFile: file, extraEnvironment: variables)
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= count }) else {
            throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
        }
        settle(run, seconds: steadySeconds)
        guard let supervisor = ProcFiles.memory(of: run.pid) else { throw BenchError("cannot read the supervisor's smaps_rollup") }
        if let supervisorNote {
            section.add(Figure("supervisor PSS, \(variant)", .megabytes, median: supervisor.pssMB, count: 1,
                               note: supervisorNote + String(format: "; RSS %.1f MB", supervisor.rssMB)))
            addParts(of: run.pid, label: variant, into: &section)
        }
        let workerMemory = run.workerPids.compactMap(ProcFiles.memory(of:))
        let server = ProcFiles.forkServerMemory(of: run.pid)
        if workerMemory.count == count, let server {
            section.add(Figure("worker PSS (each), \(variant)", .megabytes, samples: Samples(workerMemory.map(\.pssMB))))
            section.add(Figure("total PSS, supervisor + fork server + \(count) workers, \(variant)", .megabytes,
                               median: supervisor.pssMB + server.pssMB + workerMemory.reduce(0) { $0 + $1.pssMB }, count: 1, note: totalNote))
        } else {
            section.fail("\(variant): read the memory of \(workerMemory.count) of \(count) workers" + (server == nil ? ", no fork server" : ""))
        }
        let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
        if stopped == nil || !left.isEmpty { section.fail("\(count) workers, \(variant): stop incomplete, \(left.count) worker(s) left") }
    }

    static func measure(_ environment: BenchEnvironment, workers count: Int, seconds: Int, http: Bool, into section: inout Section) throws {
        let file = try environment.writeAgent("idle-\(count)" + (http ? "-http" : ""),
                                              settings: GeneratedSettings.idle(count: count, http: http ? HTTPBench.httpSettings : nil))
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= count && (!http || HTTPBench.listeningPort(run) != nil) }) else {
            throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
        }
        // Let the workers' dispatch threads that served the start retire (they idle out after
        // a few seconds), so that the window sees the steady state.
        settle(run, seconds: steadySeconds)
        let workers = run.workerPids
        var slices = Samples()
        var workerSlices = Samples()
        let wakeupsStart = ProcFiles.wakeupsByThread(of: run.pid)
        // Per thread, so that a thread exiting in the window (a worker's idle dispatch thread)
        // does not take its past CPU time out of the sum.
        var previous = (time: Clock.now(), cpu: ProcFiles.cpuByThread(of: run.pid), workers: workers.map(ProcFiles.cpuByThread(of:)))
        let start = previous.time
        var total = (supervisor: Int64(0), workers: Int64(0))
        for _ in 0..<seconds {
            settle(run, seconds: 1)
            let now = Clock.now()
            let cpu = ProcFiles.cpuByThread(of: run.pid)
            let workerCPU = workers.map(ProcFiles.cpuByThread(of:))
            let spent = ProcFiles.cpuSpent(from: previous.cpu, to: cpu)
            let workersSpent = zip(previous.workers, workerCPU).reduce(Int64(0)) { $0 + ProcFiles.cpuSpent(from: $1.0, to: $1.1) }
            slices.append(Double(spent) / 1e9 / (now - previous.time) * 100)
            workerSlices.append(Double(workersSpent) / 1e9 / (now - previous.time) * 100)
            total.supervisor += spent
            total.workers += workersSpent
            previous = (now, cpu, workerCPU)
        }
        let elapsed = previous.time - start
        let mean = Double(total.supervisor) / 1e9 / elapsed * 100
        let workersMean = Double(total.workers) / 1e9 / elapsed * 100
        // Wakeups per thread name (threads that came and went in the window are not counted).
        var byName: [String: Int] = [:]
        for (tid, now) in ProcFiles.wakeupsByThread(of: run.pid) {
            // Threads without a name of their own carry the process's name.
            let name = tid == run.pid ? "main thread" : now.name == "agent-control" ? "other threads" : now.name
            byName[name, default: 0] += now.count - (wakeupsStart[tid]?.count ?? 0)
        }
        let wakeups = Double(byName.values.reduce(0, +)) / elapsed
        let busiest = byName.filter { $0.value > 0 }.sorted { $0.value > $1.value }.prefix(3)
            .map { String(format: "%@ %.1f", $0.key, Double($0.value) / elapsed) }.joined(separator: ", ")
        let target = count == 20 ? "target < 0.01 %; " : "target < 0.5 %; "
        let cpuNote = String(format: "mean %.4f %%, %.1f wakeups/s", mean, wakeups) + (busiest.isEmpty ? "" : " (\(busiest))")
        guard let supervisor = ProcFiles.memory(of: run.pid) else { throw BenchError("cannot read the supervisor's smaps_rollup") }
        let workerMemory = workers.compactMap(ProcFiles.memory(of:))
        guard workerMemory.count == count else { throw BenchError("read the memory of \(workerMemory.count) of \(count) workers") }
        // The fork server and its zygotes are part of the runtime's cost: counted in the total.
        let server = ProcFiles.forkServerMemory(of: run.pid)
        let totalPSS = supervisor.pssMB + (server?.pssMB ?? 0) + workerMemory.reduce(0) { $0 + $1.pssMB }
        if http {
            section.add(Figure("supervisor CPU, \(count) idle workers, http on", .percentOfCore, samples: slices,
                               note: "the run just above with the HTTP server listening; " + cpuNote))
            section.add(Figure("supervisor RSS, http on", .megabytes, median: supervisor.rssMB, count: 1))
            section.add(Figure("supervisor PSS, http on", .megabytes, median: supervisor.pssMB, count: 1,
                               note: "against \"supervisor PSS\" above, http off"))
            addParts(of: run.pid, label: "http on", into: &section)
            section.add(Figure("total PSS, supervisor + fork server + \(count) workers, http on", .megabytes, median: totalPSS, count: 1,
                               note: "target ≤ 30 MB (issue 38)"))
            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
            if stopped == nil || !left.isEmpty { section.fail("\(count) workers, http on: stop incomplete, \(left.count) worker(s) left") }
            return
        }
        section.add(Figure("supervisor CPU, \(count) idle workers", .percentOfCore, samples: slices, note: target + cpuNote))
        section.add(Figure("  the \(count) workers' CPU together", .percentOfCore, samples: workerSlices,
                           note: String(format: "mean %.4f %%", workersMean)))

        if count == 20 {
            section.add(Figure("supervisor RSS", .megabytes, median: supervisor.rssMB, count: 1))
            section.add(Figure("supervisor PSS", .megabytes, median: supervisor.pssMB, count: 1))
            addParts(of: run.pid, label: nil, into: &section)
            if let server {
                section.add(Figure("fork server RSS", .megabytes, median: server.rssMB, count: 1, note: "with its zygote (one per module: bench)"))
                section.add(Figure("fork server PSS", .megabytes, median: server.pssMB, count: 1, note: "with its zygote"))
            } else {
                section.fail("no fork server among agent-control's children")
            }
            section.add(Figure("worker RSS (each)", .megabytes, samples: Samples(workerMemory.map(\.rssMB))))
            section.add(Figure("worker PSS (each)", .megabytes, samples: Samples(workerMemory.map(\.pssMB))))
        } else {
            section.add(Figure("supervisor RSS, \(count) workers", .megabytes, median: supervisor.rssMB, count: 1))
        }
        section.add(Figure("total PSS, supervisor + fork server + \(count) workers", .megabytes, median: totalPSS, count: 1,
                           note: count == 20 ? "target < 40 MB (issue 38: ≤ 25 MB); live-agent 96.9, circus 88.5, supervisord 80.6" : nil))

        let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
        if stopped == nil || !left.isEmpty { section.fail("\(count) workers: stop incomplete, \(left.count) worker(s) left") }
    }

    /// How long after the last worker is ready memory and CPU are read: past the workers' and
    /// the fork server's page releases (1 s), the supervisor's (once the starts settle), the
    /// store's first retention pass after the start (10 s), and the workers' dispatch threads
    /// that served the start retiring. Read sooner, the figures were those of a moment, not of
    /// the steady state (the supervisor's PSS grew by 4 MB at the pass).
    static let steadySeconds: Double = 12

    /// Keeps reading the supervisor's log for `seconds` (nothing should come).
    static func settle(_ run: ConsoleRun, seconds: Double) {
        let until = Clock.now() + seconds
        while Clock.now() < until { run.pump(maxWait: until - Clock.now()) }
    }
}
