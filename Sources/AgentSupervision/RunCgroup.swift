import AgentCore
import Foundation

/// The cgroup of one attempt of a command run, beside the workers' leaf in the agent's cgroup
/// (``AgentCgroup``): the program starts in it (clone3 into the cgroup), so everything it
/// starts — a `setsid` daemon with a cleared environment included — is in it too, and one
/// `cgroup.kill` ends them all. It carries the task's limits and tells what the run used.
/// A limit its controller is missing for in v2 is kept by a group of the run in that
/// controller's v1 hierarchy (``CgroupV1Limits``), which the program joins before exec.
package final class RunCgroup {
    package let path: String
    /// The folder, open for clone3 (-1 once removed).
    package private(set) var fd: Int32
    /// The run's groups in v1 hierarchies (limits only).
    package private(set) var v1Groups: [CgroupV1Limits.Group]
    /// Their `cgroup.procs`, open for the program to join before exec.
    package var joins: [Int32] { v1Groups.map(\.join) }
    /// The memory limit, for the reason of a run it killed.
    private let limits: ResourceLimits?

    /// Why a run's cgroup could not be made; the run fails with it.
    package struct Failure: Error {
        package var message: String

        package init(message: String) {
            self.message = message
        }
    }

    private init(path: String, fd: Int32, v1Groups: [CgroupV1Limits.Group], limits: ResourceLimits?) {
        self.path = path
        self.fd = fd
        self.v1Groups = v1Groups
        self.limits = limits
    }

    deinit {
        if fd >= 0 { close(fd) }
        v1Groups.forEach { close($0.join) }
    }

    /// Makes the cgroup `name` in the agent's cgroup, with `limits` applied: in it where v2 has
    /// the controller, else in groups of the same name in `v1`'s hierarchies. A leftover of the
    /// same name (an attempt that could not be removed) is emptied and made afresh.
    package static func make(in agent: AgentCgroup, v1: CgroupV1Limits?, name: String, limits: ResourceLimits?) -> Result<RunCgroup, Failure> {
        let inV1 = limits?.controllers.filter { !agent.controllers.contains($0) } ?? []
        if case let missing = inV1.filter({ v1?.folders[$0] == nil }), !missing.isEmpty {
            let v1Reasons = missing.compactMap { v1?.missing[$0] }.reduce(into: [String]()) { if !$0.contains($1) { $0.append($1) } }
            return .failure(Failure(message: "cannot enforce the task's \"limits\" (\(missing.joined(separator: ", "))): \(agent.missingControllers ?? "no controller")" + (v1Reasons.isEmpty ? "" : "; in cgroup v1: \(v1Reasons.joined(separator: "; "))") + "; give the agent's cgroup the controllers, or remove \"limits\" from the task"))
        }
        var v1Groups: [CgroupV1Limits.Group] = []
        if let v1, let limits, !inV1.isEmpty {
            switch v1.makeGroups(name: safe(name), controllers: inV1, limits: limits) {
            case .success(let groups): v1Groups = groups
            case .failure(let failure): return .failure(Failure(message: failure.message + "; the command was not started"))
            }
        }
        switch makeV2(in: agent, name: name, files: limits?.cgroupFiles.filter { file in agent.controllers.contains { file.file.hasPrefix($0 + ".") } } ?? []) {
        case .success((let path, let fd)): return .success(RunCgroup(path: path, fd: fd, v1Groups: v1Groups, limits: limits))
        case .failure(let failure):
            CgroupV1Limits.remove(v1Groups)
            return .failure(failure)
        }
    }

    /// The v2 cgroup, `files` written, open.
    private static func makeV2(in agent: AgentCgroup, name: String, files: [(file: String, value: String)]) -> Result<(String, Int32), Failure> {
        let path = agent.path + "/" + safe(name)
        if mkdir(path, 0o755) != 0 {
            guard errno == EEXIST else { return .failure(failure("cannot make the run's cgroup \(path)", errno)) }
            WorkerCgroup.kill(path)
            WorkerCgroup.removeTree(path)
            guard mkdir(path, 0o755) == 0 else { return .failure(failure("cannot make the run's cgroup \(path) afresh", errno)) }
        }
        for (file, value) in files {
            let code = WorkerCgroup.write(value, to: path + "/" + file)
            if code != 0 {
                rmdir(path)
                return .failure(failure("cannot set \(file) to \(value) in \(path)", code))
            }
        }
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            rmdir(path)
            return .failure(failure("cannot open the run's cgroup \(path)", code))
        }
        return .success((path, fd))
    }

    private static func failure(_ what: String, _ code: Int32) -> Failure {
        Failure(message: "\(what): \(String(cString: strerror(code))); the command was not started")
    }

    /// A cgroup name from a run id: letters, digits, `.`, `_`, `-` (others become `_`).
    package static func safe(_ name: String) -> String {
        String(name.map { $0.isASCII && ($0.isLetter || $0.isNumber || "._-".contains($0)) ? $0 : "_" })
    }

    /// Ends every process in it (`cgroup.kill`).
    package func kill() {
        WorkerCgroup.kill(path)
    }

    /// Sends `signal` to each process in it (a cancel's SIGTERM reaches daemons too).
    package func signal(_ signal: Int32) {
        for pid in WorkerCgroup.members(path) { Glibc.kill(pid, signal) }
    }

    /// Whether a process of it is alive (zombies do not count).
    package var isPopulated: Bool { WorkerCgroup.isPopulated(path) }

    /// What its processes used: cpu.stat's `usage_usec` (there with or without the cpu
    /// controller) and, with the memory controller, `memory.peak` (v1:
    /// `memory.max_usage_in_bytes` of its memory group).
    package func usage() -> ResourceUsage? {
        guard let microseconds = Self.field("usage_usec", in: path + "/cpu.stat") else { return nil }
        let peak = ([path + "/memory.peak"] + v1Groups.map { $0.path + "/memory.max_usage_in_bytes" }).lazy
            .compactMap { ProcFile.read($0).flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) } }
            .first
        return ResourceUsage(cpuSeconds: Double(microseconds) / 1e6, memoryPeakBytes: peak)
    }

    /// Why the run failed when its memory limit killed one of its processes (the OOM killer's
    /// count in v2 `memory.events` or v1 `memory.oom_control`), nil otherwise.
    package func memoryLimitReason() -> String? {
        guard let bytes = limits?.memoryBytes else { return nil }
        let kills = ([path + "/memory.events"] + v1Groups.map { $0.path + "/memory.oom_control" })
            .compactMap { Self.field("oom_kill", in: $0) }.reduce(0, +)
        guard kills > 0 else { return nil }
        return "killed by its memory limit (the task's \"limits\": {\"memory\"}, \(bytes) bytes): its processes needed more, and the kernel's OOM killer ended \(kills == 1 ? "one of them" : "\(kills) of them"); raise the limit or make the command use less"
    }

    /// The number after `name ` on a line of a cgroup's flat-keyed `file`.
    package static func field(_ name: String, in file: String) -> Int? {
        guard let text = ProcFile.read(file),
              let line = text.split(separator: "\n").first(where: { $0.hasPrefix(name + " ") }) else { return nil }
        return Int(line.dropFirst(name.count + 1))
    }

    /// Removes the (empty) cgroup. Returns an errno value, 0 when done.
    @discardableResult
    package func remove() -> Int32 {
        if fd >= 0 { close(fd) }
        fd = -1
        let v1 = CgroupV1Limits.remove(v1Groups)
        v1Groups = []
        let v2 = WorkerCgroup.removeTree(path)
        return v2 != 0 ? v2 : v1
    }
}
