import AgentCore
import CAgentSystem
import Foundation
import Logging

/// Keeps account of everything an agent's workers start, so that nothing of the agent
/// outlives it, not even children a module moved to a session of their own after a `kill -9`
/// of the supervisor.
///
/// Where cgroup v2 is writable (and has `cgroup.kill`, Linux 5.14), the workers live in a
/// cgroup of the agent's own, a child of the supervisor's cgroup named after the run folder
/// (`agent-<hash>`): the fork server moves itself into it before it forks anything, a worker
/// started with posix_spawn before any module code runs, and whatever they start inherits it.
/// It is killed with `cgroup.kill` and removed at stop; when the supervisor is killed, the
/// fork server (which has no parent-death signal there) moves out, kills it and removes it at
/// the end of file on its socket; and the next start kills what may still be left. `AGENT_CGROUPS=0` turns cgroups off.
///
/// Elsewhere the next start kills what is left of a dead run: the processes of the workers'
/// process groups (a group whose leader's pid now belongs to another process is left alone)
/// and the processes whose environment carries the run's `AGENT_INSTANCE` token (children in
/// another session that kept the environment). A child that left both escapes.
///
/// Both are written down in the run folder (`workers`), which the next start reads.
public final class WorkerContainment {
    /// The cgroup holding the workers, nil when the process groups are recorded instead.
    public private(set) var cgroup: String?
    /// What workers get in their environment.
    public private(set) var environment: [String: String] = [:]
    let recordPath: String
    private let logger: Logger
    private let instance: String
    /// Without a cgroup: the workers (leaders of their process groups) and their start times.
    private var groups: [pid_t: UInt64] = [:]
    private var finished = false

    static let recordName = "workers"
    static let instanceKey = "AGENT_INSTANCE"

    private init(recordPath: String, cgroup: String?, logger: Logger) {
        self.recordPath = recordPath
        self.cgroup = cgroup
        self.logger = logger
        instance = "\(getpid())-\(ProcStat.read(getpid())?.startTime ?? 0)"
        if let cgroup {
            environment[WorkerCgroup.environmentKey] = cgroup
        } else {
            // Empty: not a cgroup inherited from whoever started the supervisor.
            environment[WorkerCgroup.environmentKey] = ""
            environment[Self.instanceKey] = instance
        }
    }

    /// Kills what a previous run in `runDirectory` left behind, then makes the cgroup for this
    /// run (or falls back to recording process groups) and writes down what the next start
    /// will have to kill if this run does not stop cleanly. Call it holding the pidfile.
    public static func prepare(runDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                               logger: Logger) -> WorkerContainment {
        let recordPath = runDirectory + "/" + recordName
        killLeftovers(recordPath: recordPath, logger: logger)
        var cgroup: String?
        switch CgroupLocation.makeAgentCgroup(runDirectory: runDirectory, environment: environment, logger: logger) {
        case .success(let path):
            cgroup = path
            logger.info("workers run in the cgroup \(path)")
        case .failure(let reason):
            logger.notice("workers run without a cgroup (\(reason.description)); a killed agent's leftovers are killed at its next start")
        }
        let containment = WorkerContainment(recordPath: recordPath, cgroup: cgroup, logger: logger)
        containment.writeRecord()
        return containment
    }

    /// A worker was started: without a cgroup, its process group is written down.
    public func workerStarted(_ pid: pid_t) {
        guard cgroup == nil, !finished, let stat = ProcStat.read(pid) else { return }
        groups = groups.filter { ProcStat.read($0.key)?.startTime == $0.value }
        groups[pid] = stat.startTime
        writeRecord()
    }

    /// At the end of a clean stop: kills what is left in the cgroup, removes it and the
    /// record. Idempotent.
    public func finish() {
        guard !finished else { return }
        finished = true
        if let cgroup {
            let left = Self.empty(cgroup: cgroup, timeout: 2)
            if !left.isEmpty {
                logger.notice("killed \(Self.describe(left)), still in the agent's cgroup at the stop")
            }
            if rmdir(cgroup) != 0, errno != ENOENT {
                logger.warning("cannot remove the cgroup \(cgroup): \(String(cString: strerror(errno))); the next start retries")
                return
            }
        }
        unlink(recordPath)
    }

    private func writeRecord() {
        var lines = ["# Written by agent-control (pid \(getpid())): what its next start kills if it does not stop cleanly."]
        if let cgroup {
            lines.append("cgroup \(cgroup)")
        } else {
            lines.append("instance \(instance)")
            lines.append("session \(getsid(0))")
            lines += groups.sorted { $0.key < $1.key }.map { "group \($0.key) \($0.value)" }
        }
        let text = lines.joined(separator: "\n") + "\n"
        let temporary = recordPath + ".new"
        do {
            try Data(text.utf8).write(to: URL(fileURLWithPath: temporary))
            guard rename(temporary, recordPath) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        } catch {
            logger.warning("cannot write \(recordPath): \(error); if this agent is killed, its next start may not find what its workers left")
        }
    }

    // MARK: What a previous run left

    /// Reads the record of a previous run and kills what it names. Returns the killed pids.
    @discardableResult
    static func killLeftovers(recordPath: String, logger: Logger) -> [(pid: pid_t, command: String)] {
        guard let text = try? String(contentsOfFile: recordPath, encoding: .utf8) else { return [] }
        var killed: [(pid: pid_t, command: String)] = []
        var instance: String?
        var session: pid_t?
        var groups: [pid_t: UInt64] = [:]
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            let parts = line.split(separator: " ", maxSplits: 1).map(String.init)
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "cgroup":
                guard CgroupLocation.isAgentCgroup(parts[1]) else {
                    logger.warning("\(recordPath): \(parts[1]) is not an agent's cgroup; left alone")
                    continue
                }
                killed += empty(cgroup: parts[1], timeout: 2)
                if rmdir(parts[1]) != 0, errno != ENOENT {
                    logger.warning("cannot remove the previous run's cgroup \(parts[1]): \(String(cString: strerror(errno)))")
                }
            case "instance": instance = parts[1]
            case "session": session = pid_t(parts[1])
            case "group":
                let fields = parts[1].split(separator: " ")
                if fields.count == 2, let pid = pid_t(fields[0]), let start = UInt64(fields[1]) { groups[pid] = start }
            default: continue
            }
        }
        if instance != nil || !groups.isEmpty {
            killed += killRecorded(instance: instance, session: session, groups: groups)
        }
        if !killed.isEmpty {
            logger.notice("killed \(describe(killed)), left behind by this agent's previous run (its supervisor did not stop cleanly)")
        }
        unlink(recordPath)
        return killed
    }

    /// Kills every process in `cgroup` and waits up to `timeout` until it is empty. Returns
    /// what was in it.
    static func empty(cgroup: String, timeout: Double) -> [(pid: pid_t, command: String)] {
        let members = WorkerCgroup.members(cgroup).filter(ProcStat.isAlive).map { ($0, Supervisor.commandName(of: $0)) }
        let deadline = EventLoop.now() + timeout
        while WorkerCgroup.isPopulated(cgroup) {
            if WorkerCgroup.kill(cgroup) != 0 {
                // No cgroup.kill: one by one, again until none is left (a fork may race).
                WorkerCgroup.members(cgroup).forEach { Glibc.kill($0, SIGKILL) }
            }
            if EventLoop.now() > deadline { break }
            usleep(2_000)
        }
        return members
    }

    /// Without a cgroup: the processes of the recorded groups (in the recorded session, started
    /// after their group's worker; none if the leader's pid now runs something else) and those
    /// whose environment carries the instance token.
    private static func killRecorded(instance: String?, session: pid_t?, groups: [pid_t: UInt64]) -> [(pid: pid_t, command: String)] {
        let ownGroups = groups.filter { leader, start in
            guard let now = ProcStat.read(leader) else { return true }
            return now.startTime == start
        }
        let token = instance.map { Array("\(instanceKey)=\($0)".utf8) + [0] }
        var killed: [(pid: pid_t, command: String)] = []
        for _ in 0..<3 {
            var found = false
            for entry in (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? [] {
                guard let pid = pid_t(entry), pid != getpid(), let stat = ProcStat.read(pid), stat.state != "Z" else { continue }
                var ours = false
                if let start = ownGroups[stat.group], stat.startTime >= start, session == nil || stat.session == session { ours = true }
                if !ours, let token, environmentContains(pid, token) { ours = true }
                guard ours else { continue }
                if !killed.contains(where: { $0.pid == pid }) { killed.append((pid, Supervisor.commandName(of: pid))) }
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
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/environ"), data.count >= token.count else { return false }
        let bytes = [UInt8](data)
        var start = 0
        while start < bytes.count {
            let end = bytes[start...].firstIndex(of: 0) ?? bytes.count
            if end - start == token.count - 1, bytes[start..<end].elementsEqual(token.dropLast()) { return true }
            start = end + 1
        }
        return false
    }

    static func describe(_ killed: [(pid: pid_t, command: String)]) -> String {
        let shown = killed.prefix(10).map { "\($0.pid) (\($0.command))" }.joined(separator: ", ")
        return "\(killed.count) process\(killed.count == 1 ? "" : "es"): pid \(shown)\(killed.count > 10 ? ", …" : "")"
    }
}
