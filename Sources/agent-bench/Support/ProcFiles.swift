import Foundation

/// What /proc says about a process: memory (RSS and PSS from smaps_rollup), CPU time (from
/// the scheduler's per-thread statistics, in nanoseconds) and voluntary context switches.
enum ProcFiles {
    /// Memory of a process in kB, from /proc/PID/smaps_rollup.
    struct Memory {
        var rssKB: Int
        var pssKB: Int
        var rssMB: Double { Double(rssKB) / 1024 }
        var pssMB: Double { Double(pssKB) / 1024 }
    }

    static func memory(of pid: Int32) -> Memory? {
        let path = "/proc/\(pid)/smaps_rollup"
        guard let rss = field("Rss:", in: path), let pss = field("Pss:", in: path) else { return nil }
        return Memory(rssKB: rss, pssKB: pss)
    }

    /// CPU time of every live thread of `pid`, in nanoseconds (first field of
    /// /proc/PID/task/TID/schedstat).
    static func cpuNanoseconds(of pid: Int32) -> Int64 {
        threads(of: pid).reduce(0) { total, tid in
            let text = read("/proc/\(pid)/task/\(tid)/schedstat") ?? ""
            return total + (text.split(separator: " ").first.flatMap { Int64($0) } ?? 0)
        }
    }

    /// CPU time of each live thread of `pid` (thread id → nanoseconds).
    static func cpuByThread(of pid: Int32) -> [String: Int64] {
        var result: [String: Int64] = [:]
        for tid in threads(of: pid) {
            result[tid] = (read("/proc/\(pid)/task/\(tid)/schedstat") ?? "").split(separator: " ").first.flatMap { Int64($0) } ?? 0
        }
        return result
    }

    /// CPU spent between two readings of ``cpuByThread(of:)``: threads present in both count
    /// their difference, new threads all of theirs. Threads that exited in between are left out
    /// (their last moments are lost) rather than subtracted, as a plain sum would.
    static func cpuSpent(from before: [String: Int64], to after: [String: Int64]) -> Int64 {
        after.reduce(0) { total, entry in total + entry.value - (before[entry.key] ?? 0) }
    }

    /// CPU time of the live threads of `pid` whose kernel name (comm) is `name` (thread id →
    /// nanoseconds): for threads started later than a run's first reading, such as the store's
    /// checkpoint thread. Compare two readings with ``cpuSpent(from:to:)``.
    static func cpuByThread(of pid: Int32, named name: String) -> [String: Int64] {
        cpuByThread(of: pid).filter { tid, _ in
            read("/proc/\(pid)/task/\(tid)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) == name
        }
    }

    /// CPU time of one thread of `pid`, in nanoseconds.
    static func cpuNanoseconds(of pid: Int32, thread tid: Int32) -> Int64 {
        (read("/proc/\(pid)/task/\(tid)/schedstat") ?? "").split(separator: " ").first.flatMap { Int64($0) } ?? 0
    }

    /// Runs `body` and returns what it returned and the threads of this process that it started
    /// (by thread id). How the bench finds the store's writer thread: Foundation on Linux does
    /// not pass a `Thread`'s name on to the kernel, so /proc/…/comm cannot tell it.
    static func threadsStarted<T>(by body: () throws -> T) rethrows -> (T, [Int32]) {
        let before = Set(threads(of: getpid()))
        let result = try body()
        return (result, threads(of: getpid()).filter { !before.contains($0) }.compactMap { Int32($0) })
    }

    /// Voluntary context switches of each live thread, by thread id, with the thread's name.
    static func wakeupsByThread(of pid: Int32) -> [Int32: (name: String, count: Int)] {
        var result: [Int32: (name: String, count: Int)] = [:]
        for tid in threads(of: pid) {
            guard let id = Int32(tid), let count = field("voluntary_ctxt_switches:", in: "/proc/\(pid)/task/\(tid)/status") else { continue }
            let name = read("/proc/\(pid)/task/\(tid)/comm")?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "?"
            result[id] = (name, count)
        }
        return result
    }

    /// Voluntary context switches of every live thread: how often the process went to sleep
    /// and was woken.
    static func wakeups(of pid: Int32) -> Int {
        threads(of: pid).reduce(0) { total, tid in
            total + (field("voluntary_ctxt_switches:", in: "/proc/\(pid)/task/\(tid)/status") ?? 0)
        }
    }

    static func threads(of pid: Int32) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
    }

    /// The integer after `key` on its line, e.g. `Pss:  1234 kB` → 1234 (spaces or tabs).
    static func field(_ key: String, in path: String) -> Int? {
        guard let text = read(path) else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix(key) {
            return line.dropFirst(key.count).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
        }
        return nil
    }

    static func read(_ path: String) -> String? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            if n <= 0 { break }
            bytes += chunk[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Whether `pid` is alive and not a zombie.
    /// The fork server among the children of `pid` (agent-control), if it runs one.
    static func forkServer(of pid: Int32) -> Int32? {
        for task in threads(of: pid) {
            let children = (read("/proc/\(pid)/task/\(task)/children") ?? "").split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
            for child in children {
                let commandLine = (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(child)/cmdline"))) ?? Data()
                if String(decoding: commandLine, as: UTF8.self).contains("--fork-server") { return child }
            }
        }
        return nil
    }

    /// The memory of the fork server and its zygotes (its children: one per module library,
    /// each having loaded its module to fork that module's workers), summed.
    static func forkServerMemory(of pid: Int32) -> Memory? {
        guard let server = forkServer(of: pid), var total = memory(of: server) else { return nil }
        for zygote in children(of: server) {
            guard let own = memory(of: zygote) else { continue }
            total = Memory(rssKB: total.rssKB + own.rssKB, pssKB: total.pssKB + own.pssKB)
        }
        return total
    }

    /// The children of `pid` (of every thread).
    static func children(of pid: Int32) -> [Int32] {
        threads(of: pid).flatMap { task in
            (read("/proc/\(pid)/task/\(task)/children") ?? "").split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
    }

    static func isAlive(_ pid: Int32) -> Bool {
        guard kill(pid, 0) == 0, let stat = read("/proc/\(pid)/stat") else { return false }
        guard let close = stat.lastIndex(of: ")") else { return false }
        return !stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
    }
}
