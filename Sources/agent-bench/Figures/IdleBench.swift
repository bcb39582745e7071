import AgentCore
import AgentRuntime
import Foundation

/// Figure 6: what an idle agent costs — the supervisor's CPU with 20 and 100 idle workers,
/// and the memory of the supervisor and its workers.
enum IdleBench {
    static func run(_ environment: BenchEnvironment) -> Section {
        let seconds = environment.quick ? 5 : 30
        var section = Section(
            number: 6, title: "Idle cost",
            method: "agent-control console (the real binary, --quiet, default settings: the store on) running N bench_idle workers (each sleeps in Task.sleep until stopped). After all are ready and 5 s of settling (2 s with --quick), CPU time is read from /proc/PID/task/*/schedstat (ns, every thread) once per second for \(seconds) s: median and max of the 1-second slices, mean in the note. wakeups = voluntary context switches of all the supervisor's threads. Memory from /proc/PID/smaps_rollup (RSS, and PSS, which shares each shared page among the processes that map it).")
        for count in [20, 100] {
            do {
                try measure(environment, workers: count, seconds: seconds, into: &section)
            } catch {
                section.fail("\(count) workers: \(error)")
            }
        }
        return section
    }

    static func measure(_ environment: BenchEnvironment, workers count: Int, seconds: Int, into section: inout Section) throws {
        let file = try environment.writeAgent("idle-\(count)", settings: GeneratedSettings.idle(count: count))
        let run = try ConsoleRun(environment: environment, settingsFile: file)
        guard run.wait(timeout: 60, until: { run.readyTimes.count >= count }) else {
            throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 60 s; \(run.errors.prefix(3).joined(separator: " | "))")
        }
        // Let the workers' dispatch threads that served the start retire (they idle out after
        // a few seconds), so that the window sees the steady state.
        settle(run, seconds: environment.quick ? 2 : 5)
        let workers = run.workerPids
        var slices = Samples()
        var workerSlices = Samples()
        let cpuStart = ProcFiles.cpuNanoseconds(of: run.pid)
        let wakeupsStart = ProcFiles.wakeups(of: run.pid)
        let workersStart = workers.reduce(Int64(0)) { $0 + ProcFiles.cpuNanoseconds(of: $1) }
        let start = Clock.now()
        var previous = (time: start, cpu: cpuStart, workers: workersStart)
        for _ in 0..<seconds {
            settle(run, seconds: 1)
            let now = Clock.now()
            let cpu = ProcFiles.cpuNanoseconds(of: run.pid)
            let workerCPU = workers.reduce(Int64(0)) { $0 + ProcFiles.cpuNanoseconds(of: $1) }
            slices.append(Double(cpu - previous.cpu) / 1e9 / (now - previous.time) * 100)
            workerSlices.append(Double(workerCPU - previous.workers) / 1e9 / (now - previous.time) * 100)
            previous = (now, cpu, workerCPU)
        }
        let elapsed = previous.time - start
        let mean = Double(previous.cpu - cpuStart) / 1e9 / elapsed * 100
        let workersMean = Double(previous.workers - workersStart) / 1e9 / elapsed * 100
        let wakeups = Double(ProcFiles.wakeups(of: run.pid) - wakeupsStart) / elapsed
        let target = count == 20 ? "target < 0.01 %; " : "target < 0.5 %; "
        section.add(Figure("supervisor CPU, \(count) idle workers", .percentOfCore, samples: slices,
                           note: target + String(format: "mean %.4f %%, %.1f wakeups/s", mean, wakeups)))
        section.add(Figure("  the \(count) workers' CPU together", .percentOfCore, samples: workerSlices,
                           note: String(format: "mean %.4f %%", workersMean)))

        guard let supervisor = ProcFiles.memory(of: run.pid) else { throw BenchError("cannot read the supervisor's smaps_rollup") }
        let workerMemory = workers.compactMap(ProcFiles.memory(of:))
        guard workerMemory.count == count else { throw BenchError("read the memory of \(workerMemory.count) of \(count) workers") }
        let totalPSS = supervisor.pssMB + workerMemory.reduce(0) { $0 + $1.pssMB }
        if count == 20 {
            section.add(Figure("supervisor RSS", .megabytes, median: supervisor.rssMB, count: 1))
            section.add(Figure("supervisor PSS", .megabytes, median: supervisor.pssMB, count: 1))
            section.add(Figure("worker RSS (each)", .megabytes, samples: Samples(workerMemory.map(\.rssMB))))
            section.add(Figure("worker PSS (each)", .megabytes, samples: Samples(workerMemory.map(\.pssMB))))
        } else {
            section.add(Figure("supervisor RSS, \(count) workers", .megabytes, median: supervisor.rssMB, count: 1))
        }
        section.add(Figure("total PSS, supervisor + \(count) workers", .megabytes, median: totalPSS, count: 1,
                           note: count == 20 ? "target < 40 MB; live-agent 96.9, circus 88.5, supervisord 80.6" : nil))

        let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
        if stopped == nil || !left.isEmpty { section.fail("\(count) workers: stop incomplete, \(left.count) worker(s) left") }
    }

    /// Keeps reading the supervisor's log for `seconds` (nothing should come).
    static func settle(_ run: ConsoleRun, seconds: Double) {
        let until = Clock.now() + seconds
        while Clock.now() < until { run.pump(maxWait: until - Clock.now()) }
    }
}
