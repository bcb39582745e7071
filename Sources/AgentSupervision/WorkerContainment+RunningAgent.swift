import AgentBase
import AgentCore
import Foundation

/// A start must not take over the run folder of an agent that still runs: its pidfile (or the
/// whole run folder) may be gone — removed by hand or by a cleaner of old files — while the
/// agent, its workers and its cgroup are not.
extension WorkerContainment {
    /// Refuses (`agent_running_here`) when the supervisor that wrote the run folder's record
    /// still runs (the same pid and start time), or when a live process other than this one
    /// holds open the cgroup this run folder's agent uses or one the record names: every
    /// supervisor keeps its workers' cgroup open for as long as it runs, and nothing else does
    /// (a killed supervisor's leftovers, whoever they were reparented to, do not).
    static func refuseBesideARunningAgent(recordPath: String, runDirectory: String) throws(RunFolder.Refusal) {
        let record = (try? RunFolder.readRecord(recordPath)).flatMap { $0 }.map(LeftoverRecord.init)
        var running: pid_t?
        if let writer = record?.supervisor, writer.pid != getpid(), ProcStat.isAlive(writer.pid),
           ProcStat.read(writer.pid)?.startTime == writer.start {
            running = writer.pid
        }
        if running == nil {
            let cgroups = (record?.cgroups ?? []) + [CgroupLocation.agentCgroupPath(runDirectory: runDirectory)].compactMap { $0 }
            for cgroup in Set(cgroups) where access(cgroup, F_OK) == 0 {
                if let holder = holder(of: cgroup) {
                    running = holder
                    break
                }
            }
        }
        guard let running else { return }
        let stopped = ProcStat.read(running)?.state == "T"
        throw RunFolder.Refusal(code: "agent_running_here", message: "an agent of this run folder still runs (pid \(running)), although its pidfile in \(runDirectory) is gone; nothing was started: this start would have killed its workers as a dead run's leftovers. Stop it first (kill -TERM \(running)\(stopped ? "; it is stopped: kill -CONT \(running) too" : "")), then start again")
    }

    /// A live process other than this one with `path`, or a folder in it, open; nil if none.
    /// Reads only what this user may read of /proc (another user's agent cannot share this
    /// run folder: the folder's checks refuse it).
    static func holder(of path: String) -> pid_t? {
        let me = getpid()
        let prefix = path + "/"
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != me else { continue }
            let folder = "/proc/\(entry)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [] {
                guard let target = link(folder + "/" + fd), target == path || target.hasPrefix(prefix) else { continue }
                if ProcStat.isAlive(pid) { return pid }
            }
        }
        return nil
    }

    /// Where a symbolic link points (nil when it cannot be read).
    private static func link(_ path: String) -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = readlink(path, &buffer, buffer.count - 1)
        guard count > 0 else { return nil }
        return String(decoding: buffer[0..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
