import Foundation

/// How busy the machine was just before the figures were taken: the share of CPU time not
/// idle over one second, and any agent-control or agent-worker that the bench did not start
/// (e.g. left behind by a test), with its CPU. Printed under the table's first line, so that
/// figures taken on a busy machine say so.
struct MachineLoad: Codable {
    /// CPU busy over the sample, in % of all cores.
    var busyPercent: Double
    /// Stray agent processes: "agent-control pid 123 (75 % of a core)".
    var strays: [String]

    static func sample(seconds: Double = 1) -> MachineLoad {
        let candidates = strayCandidates()
        let cpuBefore = candidates.map { ProcFiles.cpuNanoseconds(of: $0.pid) }
        let before = totals()
        let start = Clock.now()
        usleep(useconds_t(seconds * 1e6))
        let after = totals()
        let elapsed = Clock.now() - start
        let busy = after.total > before.total
            ? Double((after.total - after.idle) - (before.total - before.idle)) / Double(after.total - before.total) * 100 : 0
        var strays: [String] = []
        for (index, candidate) in candidates.enumerated() {
            let percent = Double(ProcFiles.cpuNanoseconds(of: candidate.pid) - cpuBefore[index]) / 1e9 / elapsed * 100
            strays.append(String(format: "%@ pid %d (%.0f %% of a core)", candidate.name, candidate.pid, percent))
        }
        return MachineLoad(busyPercent: busy, strays: strays)
    }

    /// agent-control and agent-worker processes that are not the bench's descendants.
    private static func strayCandidates() -> [(pid: Int32, name: String)] {
        let me = getpid()
        var result: [(pid: Int32, name: String)] = []
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = Int32(entry), pid != me,
                  let name = ProcFiles.read("/proc/\(pid)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines),
                  name == "agent-control" || name == "agent-worker", ProcFiles.isAlive(pid), !descends(pid, from: me)
            else { continue }
            result.append((pid, name))
        }
        return result
    }

    private static func descends(_ pid: Int32, from ancestor: Int32) -> Bool {
        var current = pid
        for _ in 0..<64 {
            guard let stat = ProcFiles.read("/proc/\(current)/stat"), let close = stat.lastIndex(of: ")") else { return false }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 1, let parent = Int32(fields[1]), parent > 1 else { return false }
            if parent == ancestor { return true }
            current = parent
        }
        return false
    }

    /// CPU time used by the whole machine and by the bench with its reaped descendants, to tell
    /// how much other processes used while a figure was taken.
    struct Usage {
        var time = Clock.now()
        /// Busy CPU time of all cores, from /proc/stat (clock ticks, in seconds).
        var machine: Double
        /// The bench's own CPU time and that of every descendant it has reaped (getrusage).
        var bench: Double
        /// Time the hypervisor ran something else while this machine's cores wanted to run
        /// (steal, from /proc/stat, in seconds; counted in `machine` too).
        var steal: Double = 0

        static func now() -> Usage {
            let ticks = Double(sysconf(Int32(_SC_CLK_TCK)))
            let totals = MachineLoad.totals()
            var own = rusage()
            var children = rusage()
            getrusage(RUSAGE_SELF.rawValue, &own)
            getrusage(RUSAGE_CHILDREN.rawValue, &children)
            func seconds(_ t: timeval) -> Double { Double(t.tv_sec) + Double(t.tv_usec) / 1e6 }
            let bench = seconds(own.ru_utime) + seconds(own.ru_stime) + seconds(children.ru_utime) + seconds(children.ru_stime)
            return Usage(machine: Double(totals.total - totals.idle) / ticks, bench: bench, steal: Double(totals.steal) / ticks)
        }

        /// CPU other processes used since `earlier`, in % of one core (never below 0). Right
        /// once the bench has reaped every process it started in between.
        func othersPercent(since earlier: Usage, unreaped: Double = 0) -> Double {
            let elapsed = time - earlier.time
            guard elapsed > 0 else { return 0 }
            return max(0, ((machine - earlier.machine) - (bench - earlier.bench) - unreaped) / elapsed * 100)
        }

        /// Steal since `earlier`, in % of one core.
        func stealPercent(since earlier: Usage) -> Double {
            let elapsed = time - earlier.time
            return elapsed > 0 ? max(0, (steal - earlier.steal) / elapsed * 100) : 0
        }
    }

    /// (all jiffies, idle + iowait jiffies, steal jiffies) from the first line of /proc/stat.
    fileprivate static func totals() -> (total: Int64, idle: Int64, steal: Int64) {
        guard let line = ProcFiles.read("/proc/stat")?.split(separator: "\n").first else { return (0, 0, 0) }
        let values = line.split(separator: " ").dropFirst().compactMap { Int64($0) }
        guard values.count >= 5 else { return (0, 0, 0) }
        return (values.prefix(8).reduce(0, +), values[3] + values[4], values.count >= 8 ? values[7] : 0)
    }
}
