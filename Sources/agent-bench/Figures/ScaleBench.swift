import AgentCore
import Foundation

/// Figure 7: many workers — start them all, then stop them all.
enum ScaleBench {
    static func run(_ environment: BenchEnvironment) -> Section {
        let count = 500
        var section = Section(
            number: 7, title: "Scale: \(count) workers",
            method: "agent-control console (the real binary, started with a soft RLIMIT_NOFILE of 1,024, the common default) with \(count) bench_idle processes; times are arrivals of its log lines (\"started worker pid\", \"ready in\") on the bench's pipe. stop = SIGTERM to agent-control until every worker and agent-control itself have exited (pidfds).")
        do {
            let file = try environment.writeAgent("scale-\(count)", settings: GeneratedSettings.idle(count: count))
            // Started with the common default soft limit on open files: the supervisor needs about
            // three per worker and must raise the limit itself.
            let run = try BenchEnvironment.withOpenFileLimit(1024) { try ConsoleRun(environment: environment, settingsFile: file) }
            guard run.wait(timeout: 180, until: { run.readyTimes.count >= count }) else {
                throw BenchError("\(run.readyTimes.count) of \(count) workers ready after 180 s; \(run.errors.prefix(3).joined(separator: " | "))")
            }
            let allReady = run.readyTimes[count - 1]
            section.add(Figure("launch → all \(count) ready", .milliseconds, median: (allReady - run.launchedAt) * 1000, count: 1))
            if let first = run.startTimes.first {
                section.add(Figure("first spawn → all \(count) ready", .milliseconds, median: (allReady - first) * 1000, count: 1,
                                   note: String(format: "%.2f ms per worker", (allReady - first) * 1000 / Double(count))))
            }
            IdleBench.settle(run, seconds: 0.5)
            if let memory = ProcFiles.memory(of: run.pid) {
                section.add(Figure("supervisor RSS", .megabytes, median: memory.rssMB, count: 1))
                section.add(Figure("supervisor PSS", .megabytes, median: memory.pssMB, count: 1))
            }
            let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(run.pid)/fd").count) ?? 0
            let limit = BenchEnvironment.openFileLimit(of: run.pid).map { "soft limit raised by agent-control from 1,024 to \(TableRenderer.grouped(Int($0)))" } ?? ""
            section.add(Figure("supervisor open fds", .count, median: Double(fds), count: 1,
                               note: String(format: "%.1f per worker; ", Double(fds) / Double(count)) + limit))
            let workerPSS = run.workerPids.compactMap(ProcFiles.memory(of:)).reduce(0) { $0 + $1.pssMB }
            section.add(Figure("total PSS of the \(count) workers", .megabytes, median: workerPSS, count: 1))

            let (stopped, left) = run.stop(signal: SIGTERM, timeout: 60)
            if let stopped {
                section.add(Figure("SIGTERM → none left", .milliseconds, median: stopped, count: 1))
            } else {
                section.fail("stop did not complete within 60 s; \(left.count) worker(s) left")
            }
            if !left.isEmpty { section.fail("\(left.count) worker(s) left after the stop") }
        } catch {
            section.fail("\(error)")
        }
        return section
    }
}
