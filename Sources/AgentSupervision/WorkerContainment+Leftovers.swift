import AgentBase
import AgentCore
import CAgentSystem
import Foundation
import Logging

/// What a previous run wrote in its `workers` record.
///
/// ```
/// supervisor 4242 881234                  (the supervisor's pid and start time)
/// server 4243 881240                      (its fork server's, the last one started)
/// cgroup /sys/fs/cgroup/…/agent-1a2b3c     (with a cgroup: all of it)
/// instance 4242-881234                    (without: the supervisor's pid and start time,
/// session 4200                             its session, its own cgroup (/proc/self/cgroup,
/// home 0::/user.slice/…                    lines joined by ";"), and each worker's process
/// group 4250 881300                        group with the leader's start time)
/// ```
package struct LeftoverRecord: Equatable {
    package var cgroups: [String] = []
    /// A process as the record names it: its pid and start time.
    package struct Named: Equatable {
        package var pid: pid_t
        package var start: UInt64
    }

    /// The supervisor that wrote the record (nil in one an older agent-control wrote).
    package var supervisor: Named?
    /// Its fork server, which removes the agent's cgroups when the supervisor dies.
    package var server: Named?
    package var instance: String?
    package var session: pid_t?
    package var home: String?
    package var groups: [pid_t: UInt64] = [:]
    /// `group` lines without a start time: never acted on.
    package var undated: [String] = []

    package init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "cgroup": cgroups.append(parts[1])
            case "supervisor", "server":
                let fields = parts[1].split(separator: " ")
                guard fields.count == 2, let pid = pid_t(fields[0]), let start = UInt64(fields[1]) else { continue }
                if parts[0] == "server" { server = Named(pid: pid, start: start) } else { supervisor = Named(pid: pid, start: start) }
            case "instance": instance = parts[1]
            case "session": session = pid_t(parts[1])
            case "home": home = parts[1]
            case "group":
                let fields = parts[1].split(separator: " ")
                if fields.count == 2, let pid = pid_t(fields[0]), let start = UInt64(fields[1]) {
                    groups[pid] = start
                } else {
                    undated.append(parts[1])
                }
            default: continue
            }
        }
    }

    /// What the recorded fork server has in its environment if it is this record's: the
    /// workers' cgroup (`AGENT_WORKER_CGROUP`) or, without one, the run's `AGENT_INSTANCE`; nil
    /// when the record says neither.
    package var serverToken: String? {
        if let cgroup = cgroups.first { return "\(WorkerCgroup.environmentKey)=\(cgroup)/\(WorkerCgroup.workersName)" }
        return instance.map { "\(WorkerContainment.instanceKey)=\($0)" }
    }

    /// The start time of the supervisor that wrote the record (from `instance PID-START`).
    package var supervisorStart: UInt64? {
        instance.flatMap { $0.split(separator: "-").last }.flatMap { UInt64($0) }
    }

    /// `pid`'s cgroups as one line: its /proc/PID/cgroup lines joined by `;` (nil when gone).
    package static func cgroupText(of pid: pid_t) -> String? {
        guard let text = ProcFile.read("/proc/\(pid)/cgroup") else { return nil }
        return text.split(separator: "\n").joined(separator: ";")
    }

    /// Why `pid` (`stat`), found in recorded group `group` or by the instance token, is not
    /// provably the previous run's; nil when it is: started after the previous supervisor
    /// (and after its group's leader), in the supervisor's session (a group member) and in
    /// its cgroup.
    package func doubt(_ pid: pid_t, _ stat: ProcStat, group: pid_t?) -> String? {
        guard let supervisorStart, let session, let home else {
            return "the record does not say the previous supervisor's start time, session and cgroup (an older agent-control wrote it)"
        }
        if stat.startTime < supervisorStart {
            return "it started before the previous supervisor (start time \(stat.startTime) < \(supervisorStart))"
        }
        if let group, let start = groups[group], stat.startTime < start {
            return "it started before its group's recorded leader (start time \(stat.startTime) < \(start))"
        }
        if group != nil, stat.session != session {
            return "its session \(stat.session) is not the previous supervisor's (\(session))"
        }
        let cgroup = Self.cgroupText(of: pid) ?? ""
        if cgroup != home {
            return "its cgroup (\(cgroup)) is not the previous supervisor's (\(home))"
        }
        return nil
    }
}

extension WorkerContainment {
    /// Reads the record of a previous run and kills what it names, each process only when it
    /// is provably the previous run's (``LeftoverRecord/doubt(_:_:group:)``; what is left alone
    /// is logged with the reason). Returns the killed pids. A record another user could have
    /// written is refused: nothing is killed.
    @discardableResult
    package static func killLeftovers(recordPath: String, logger: Logger) throws(RunFolder.Refusal) -> [(pid: pid_t, command: String)] {
        guard let text = try RunFolder.readRecord(recordPath) else { return [] }
        let record = LeftoverRecord(text)
        var killed: [(pid: pid_t, command: String)] = []
        if let server = record.server, let token = record.serverToken { awaitServer(server, token: token, logger: logger) }
        for cgroup in record.cgroups {
            guard CgroupLocation.isAgentCgroup(cgroup) else {
                logger.warning("\(recordPath): \(cgroup) is not an agent's cgroup; left alone")
                continue
            }
            // The agent made it: a cgroup of another user is not its.
            var info = stat()
            if stat(cgroup, &info) == 0, info.st_uid != geteuid() {
                logger.warning("\(recordPath): \(cgroup) belongs to uid \(info.st_uid), not to this agent's user (uid \(geteuid())); left alone")
                continue
            }
            killed += empty(cgroup: cgroup, timeout: 2)
            if case let code = WorkerCgroup.removeTree(cgroup), code != 0 {
                logger.warning("cannot remove the previous run's cgroup \(cgroup): \(String(cString: strerror(code)))")
            }
        }
        for line in record.undated {
            logger.warning("\(recordPath): \"group \(line)\" has no start time; its processes are left alone")
        }
        if record.instance != nil || !record.groups.isEmpty {
            killed += killRecorded(record, recordPath: recordPath, logger: logger)
        }
        if !killed.isEmpty {
            logger.notice("killed \(describe(killed)), left behind by this agent's previous run (its supervisor did not stop cleanly)")
        }
        unlink(recordPath)
        return killed
    }

    /// The previous run's fork server, which at its supervisor's death empties and removes the
    /// agent's cgroups (v2, then its folders in v1 hierarchies): waited for, so that its removals
    /// never meet this start's making the same cgroups again; killed after `timeout` (it is
    /// stopped, or slow). Only the recorded process, and only if it is this run folder's: the pid
    /// with the recorded start time, running agent-worker, `token` (``LeftoverRecord/serverToken``)
    /// in its environment.
    package static func awaitServer(_ server: LeftoverRecord.Named, token: String, timeout: Double = 3, logger: Logger) {
        let pidFD = agent_pidfd_open(server.pid)
        guard pidFD >= 0 else { return }
        defer { close(pidFD) }
        guard let stat = ProcStat.read(server.pid), stat.startTime == server.start, stat.state != "Z",
              ProcStat.commandName(of: server.pid) == "agent-worker", environmentContains(server.pid, Array(token.utf8) + [0]) else { return }
        guard !PidFD.awaitExit(pidFD, within: timeout) else { return }
        logger.notice("the previous run's fork server (pid \(server.pid)) had not removed the agent's cgroups after \(timeout) s; killed")
        Glibc.kill(server.pid, SIGKILL)
        PidFD.awaitExit(pidFD, within: 1)
    }

    /// Without a cgroup: the processes of the recorded groups (none if the leader's pid now
    /// runs another process) and those whose environment carries the instance token, each
    /// only when ``LeftoverRecord/doubt(_:_:group:)`` finds nothing.
    private static func killRecorded(_ record: LeftoverRecord, recordPath: String, logger: Logger) -> [(pid: pid_t, command: String)] {
        let ownGroups = record.groups.filter { leader, start in
            guard let now = ProcStat.read(leader), now.state != "Z" else { return true }
            if now.startTime != start {
                logger.notice("\(recordPath): pid \(leader) is not the recorded worker any more (start time \(now.startTime), recorded \(start)); its group is left alone")
                return false
            }
            return true
        }
        let token = record.instance.map { Array("\(instanceKey)=\($0)".utf8) + [0] }
        var killed: [(pid: pid_t, command: String)] = []
        var doubted: Set<pid_t> = []
        for _ in 0..<3 {
            var found = false
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry), pid != getpid(), let stat = ProcStat.read(pid), stat.state != "Z" else { continue }
                let group: pid_t? = ownGroups[stat.group] != nil ? stat.group : nil
                guard group != nil || token.map({ environmentContains(pid, $0) }) == true else { continue }
                if let doubt = record.doubt(pid, stat, group: group) {
                    if doubted.insert(pid).inserted, doubted.count <= 10 {
                        logger.notice("\(recordPath): pid \(pid) (\(ProcStat.commandName(of: pid))) is left alone: \(doubt)")
                    }
                    continue
                }
                if !killed.contains(where: { $0.pid == pid }) { killed.append((pid, ProcStat.commandName(of: pid))) }
                Glibc.kill(pid, SIGKILL)
                found = true
            }
            // A process may have forked while the scan ran: look again.
            guard found else { break }
            usleep(20_000)
        }
        return killed
    }

    private static func environmentContains(_ pid: pid_t, _ token: [UInt8]) -> Bool {
        guard let bytes = ProcFile.bytes("/proc/\(pid)/environ"), bytes.count >= token.count else { return false }
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0) ?? bytes.count
            if end - start == token.count - 1, bytes[start..<end].elementsEqual(token.dropLast()) { return true }
            start = end + 1
        }
        return false
    }
}
