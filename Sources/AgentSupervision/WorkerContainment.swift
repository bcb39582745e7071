import AgentBase
import AgentCore
import AgentLoop
import CAgentSystem
import Foundation
import Logging

/// Keeps account of everything an agent's workers start, so that nothing of the agent
/// outlives it, not even children a module moved to a session of their own after a `kill -9`
/// of the supervisor.
///
/// Where cgroup v2 is writable (and has `cgroup.kill`, Linux 5.14), the workers live in a
/// cgroup of the agent's own, a child of the supervisor's cgroup named after the run folder
/// (`agent-<hash>`, see ``AgentCgroup``): the fork server and each worker start in its
/// `workers` leaf, each command run in a cgroup of its own beside it (clone3 into the cgroup,
/// before their first instruction), and whatever they start inherits it.
/// It is killed with `cgroup.kill` and removed at stop; when the supervisor is killed, the
/// fork server (which has no parent-death signal there) moves out, kills it and removes it at
/// the end of file on its socket; and the next start kills what may still be left. `AGENT_CGROUPS=0` turns cgroups off.
///
/// Elsewhere the next start kills what is left of a dead run: the processes of the workers'
/// process groups (a group whose leader's pid now belongs to another process is left alone)
/// and the processes whose environment carries the run's `AGENT_INSTANCE` token (children in
/// another session that kept the environment). A child that left both escapes.
///
/// Both are written down in the run folder (`workers`, 0600), which the next start reads:
/// only a record of the agent's own user that no one else can write, and of it only the
/// processes provably the previous run's (see `WorkerContainment+Leftovers`).
public final class WorkerContainment {
    /// The cgroup holding the workers and runs, nil when the process groups are recorded instead.
    public var cgroup: String? { agentCgroup?.path }
    /// Its layout: the workers' leaf and the controllers the runs get.
    package let agentCgroup: AgentCgroup?
    /// Where the limits v2 cannot enforce are kept (cgroup v1 hierarchies); nil without a cgroup.
    package let v1Limits: CgroupV1Limits?
    /// The workers' leaf, open for clone3 (-1: none).
    public var workersCgroupFD: Int32 { agentCgroup?.workersFD ?? -1 }
    /// What workers get in their environment.
    public private(set) var environment: [String: String] = [:]
    package let recordPath: String
    private let logger: Logger
    private let instance: String
    /// Without a cgroup: the workers (leaders of their process groups) and their start times.
    private var groups: [pid_t: UInt64] = [:]
    /// The fork server last started, and its start time.
    private var server: (pid: pid_t, start: UInt64)?
    private var finished = false

    package static let recordName = "workers"
    package static let instanceKey = "AGENT_INSTANCE"

    private init(recordPath: String, cgroup: AgentCgroup?, v1Limits: CgroupV1Limits?, logger: Logger) {
        self.recordPath = recordPath
        agentCgroup = cgroup
        self.v1Limits = v1Limits
        self.logger = logger
        instance = "\(getpid())-\(ProcStat.read(getpid())?.startTime ?? 0)"
        if let cgroup {
            environment[WorkerCgroup.environmentKey] = cgroup.workersPath
        } else {
            // Empty: not a cgroup inherited from whoever started the supervisor.
            environment[WorkerCgroup.environmentKey] = ""
            environment[Self.instanceKey] = instance
        }
        // For the fork server, which removes them when the supervisor is killed; empty when there
        // are none, so that an agent started by another agent's worker never names the other's.
        environment[WorkerCgroup.v1FoldersKey] = v1Limits.map { Set($0.folders.values).sorted().joined(separator: "\n") } ?? ""
    }

    /// Kills what a previous run in `runDirectory` left behind, then makes the cgroup for this
    /// run (or falls back to recording process groups) and writes down what the next start
    /// will have to kill if this run does not stop cleanly. Call it holding the pidfile.
    /// A record another user could have written is refused (``RunFolder/readRecord(_:)``):
    /// nothing is killed and the agent does not start; so is a start beside a live agent of
    /// the same run folder whose pidfile was removed (``refuseBesideARunningAgent(recordPath:runDirectory:)``).
    public static func prepare(runDirectory: String, environment: [String: String] = ProcessInfo.processInfo.environment,
                               logger: Logger) throws(RunFolder.Refusal) -> WorkerContainment {
        let recordPath = runDirectory + "/" + recordName
        try refuseBesideARunningAgent(recordPath: recordPath, runDirectory: runDirectory)
        try killLeftovers(recordPath: recordPath, logger: logger)
        var cgroup: AgentCgroup?
        var v1Limits: CgroupV1Limits?
        switch CgroupLocation.makeAgentCgroup(runDirectory: runDirectory, environment: environment, logger: logger).flatMap(AgentCgroup.make) {
        case .success(let made):
            cgroup = made
            logger.info("workers run in the cgroup \(made.path), each command run in a cgroup of its own beside them")
            // Limits only: v1 where v2 lacks a controller.
            let lacking = AgentCgroup.limitControllers.filter { !made.controllers.contains($0) }
            if !lacking.isEmpty { v1Limits = CgroupV1Limits.make(controllers: lacking, runDirectory: runDirectory, environment: environment, logger: logger) }
            let line = made.limitsLine(v1: v1Limits)
            if lacking.allSatisfy({ v1Limits?.folders[$0] != nil }) { logger.info("\(line)") } else { logger.notice("\(line)") }
        case .failure(let reason):
            logger.notice("workers run without a cgroup (\(reason.description)), and so do commands: a command's tree is ended through its process group, a killed agent's leftovers are killed at its next start, and a run of a task with \"limits\" fails (they cannot be enforced)")
        }
        let containment = WorkerContainment(recordPath: recordPath, cgroup: cgroup, v1Limits: v1Limits, logger: logger)
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

    /// A fork server was started: the next start waits for it to finish its removal of the
    /// agent's cgroups, should this supervisor die (see `awaitServer`).
    public func forkServerStarted(_ pid: pid_t) {
        guard !finished, server?.pid != pid, let stat = ProcStat.read(pid) else { return }
        server = (pid, stat.startTime)
        writeRecord()
    }

    /// At the end of a clean stop: kills what is left in the cgroup, removes it and the
    /// record. Idempotent.
    public func finish() {
        guard !finished else { return }
        finished = true
        if let cgroup {
            let left = Self.empty(cgroup: cgroup, timeout: 2)
            v1Limits?.finish()
            if !left.isEmpty {
                logger.notice("killed \(Self.describe(left)), still in the agent's cgroup at the stop")
            }
            if case let code = WorkerCgroup.removeTree(cgroup), code != 0 {
                logger.warning("cannot remove the cgroup \(cgroup): \(String(cString: strerror(code))); the next start retries")
                return
            }
        }
        unlink(recordPath)
    }

    private func writeRecord() {
        var lines = ["# Written by agent-control (pid \(getpid())): what its next start kills if it does not stop cleanly."]
        lines.append("supervisor \(getpid()) \(ProcStat.read(getpid())?.startTime ?? 0)")
        if let server { lines.append("server \(server.pid) \(server.start)") }
        if let cgroup {
            lines.append("cgroup \(cgroup)")
        } else {
            lines.append("instance \(instance)")
            lines.append("session \(getsid(0))")
            lines.append("home \(LeftoverRecord.cgroupText(of: getpid()) ?? "")")
            lines += groups.sorted { $0.key < $1.key }.map { "group \($0.key) \($0.value)" }
        }
        let text = lines.joined(separator: "\n") + "\n"
        do {
            // 0600 whatever the umask: what it says is what the next start kills.
            try PrivateFiles.write(Array(text.utf8), atomicallyTo: recordPath)
        } catch {
            logger.warning("cannot write \(recordPath): \(error); if this agent is killed, its next start may not find what its workers left")
        }
    }

    /// Kills every process in `cgroup` and waits up to `timeout` until it is empty. Returns
    /// what was in it and not already dying.
    package static func empty(cgroup: String, timeout: Double) -> [(pid: pid_t, command: String)] {
        // Those already dying (a zygote its fork server's exit has just killed) are waited for
        // but not named: nothing was left behind there.
        let members = WorkerCgroup.members(cgroup).filter { !ProcStat.isDying($0) }.map { ($0, ProcStat.commandName(of: $0)) }
        let deadline = EventLoop.now() + timeout
        while WorkerCgroup.isPopulated(cgroup) {
            // Again until none is left (a fork may race); each member by its pid too.
            WorkerCgroup.kill(cgroup)
            if EventLoop.now() > deadline { break }
            usleep(2_000)
        }
        return members
    }

    package static func describe(_ killed: [(pid: pid_t, command: String)]) -> String {
        let shown = killed.prefix(10).map { "\($0.pid) (\($0.command))" }.joined(separator: ", ")
        return "\(killed.count) process\(killed.count == 1 ? "" : "es"): pid \(shown)\(killed.count > 10 ? ", …" : "")"
    }
}
