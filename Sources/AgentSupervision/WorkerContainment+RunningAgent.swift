import AgentBase
import AgentCore
import Foundation

/// A start must not take over the run folder of an agent that still runs: its pidfile (or the
/// whole run folder) may be gone — removed by hand or by a cleaner of old files — while the
/// agent, its workers and its cgroup are not.
extension WorkerContainment {
    /// Refuses (`agent_running_here`) when the supervisor that wrote the run folder's record
    /// still runs (the same pid and start time), or when a live process of this user other
    /// than this one holds open the workers' folder of the cgroup this run folder's agent uses
    /// or of one the record names: every supervisor keeps it open for as long as it runs, and
    /// nothing else does (a killed supervisor's leftovers, whoever they were reparented to, do
    /// not; a tool reading the cgroup's files opens those, not the folder).
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
                if let holder = holder(of: cgroup + "/" + WorkerCgroup.workersName) {
                    running = holder
                    break
                }
            }
        }
        guard let running else { return }
        let stopped = ProcStat.read(running)?.state == "T"
        throw RunFolder.Refusal(code: "agent_running_here", message: "an agent of this run folder still runs (pid \(running)), although its pidfile in \(runDirectory) is gone; nothing was started: this start would have killed its workers as a dead run's leftovers. Stop it first (kill -TERM \(running)\(stopped ? "; it is stopped: kill -CONT \(running) too" : "")), then start again")
    }

    /// A live process of this user, other than this one, with the folder `path` open; nil if
    /// none. Only this user's processes count: another user's agent cannot share this run
    /// folder (the folder's checks refuse it), and anyone may open a cgroup's folder — for a
    /// start as root, another user holding it must not hold the agent back.
    static func holder(of path: String) -> pid_t? {
        let me = getpid()
        let user = geteuid()
        for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
            guard let pid = pid_t(entry), pid != me else { continue }
            var info = stat()
            guard stat("/proc/\(entry)", &info) == 0, info.st_uid == user else { continue }
            let folder = "/proc/\(entry)/fd"
            for fd in (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            where (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + fd)) == path {
                if ProcStat.isAlive(pid) { return pid }
            }
        }
        return nil
    }
}
