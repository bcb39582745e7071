import AgentCore
import Foundation

/// The cgroup of one attempt of a command run, beside the workers' leaf in the agent's cgroup
/// (``AgentCgroup``): the program starts in it (clone3 into the cgroup), so everything it
/// starts — a `setsid` daemon with a cleared environment included — is in it too, and one
/// `cgroup.kill` ends them all. It carries the task's limits and tells what the run used.
package final class RunCgroup {
    package let path: String
    /// The folder, open for clone3 (-1 once removed).
    package private(set) var fd: Int32

    /// Why a run's cgroup could not be made; the run fails with it.
    package struct Failure: Error {
        package var message: String

        package init(message: String) {
            self.message = message
        }
    }

    private init(path: String, fd: Int32) {
        self.path = path
        self.fd = fd
    }

    deinit { if fd >= 0 { close(fd) } }

    /// Makes the cgroup `name` in the agent's cgroup, with `limits` applied. A leftover of the
    /// same name (an attempt that could not be removed) is emptied and made afresh.
    package static func make(in agent: AgentCgroup, name: String, limits: ResourceLimits?) -> Result<RunCgroup, Failure> {
        if let limits, case let missing = limits.controllers.filter({ !agent.controllers.contains($0) }), !missing.isEmpty {
            return .failure(Failure(message: "cannot enforce the task's \"limits\" (\(missing.joined(separator: ", "))): \(agent.missingControllers ?? "no controller"); give the agent's cgroup the controllers, or remove \"limits\" from the task"))
        }
        let path = agent.path + "/" + safe(name)
        if mkdir(path, 0o755) != 0 {
            guard errno == EEXIST else { return .failure(failure("cannot make the run's cgroup \(path)", errno)) }
            WorkerCgroup.kill(path)
            WorkerCgroup.removeTree(path)
            guard mkdir(path, 0o755) == 0 else { return .failure(failure("cannot make the run's cgroup \(path) afresh", errno)) }
        }
        for (file, value) in limits?.cgroupFiles ?? [] {
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
        return .success(RunCgroup(path: path, fd: fd))
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
    /// controller) and, with the memory controller, `memory.peak`.
    package func usage() -> ResourceUsage? {
        guard let stat = try? String(contentsOfFile: path + "/cpu.stat", encoding: .utf8),
              let line = stat.split(separator: "\n").first(where: { $0.hasPrefix("usage_usec ") }),
              let microseconds = Int(line.dropFirst("usage_usec ".count)) else { return nil }
        let peak = (try? String(contentsOfFile: path + "/memory.peak", encoding: .utf8))
            .flatMap { Int($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        return ResourceUsage(cpuSeconds: Double(microseconds) / 1e6, memoryPeakBytes: peak)
    }

    /// Removes the (empty) cgroup. Returns an errno value, 0 when done.
    @discardableResult
    package func remove() -> Int32 {
        if fd >= 0 { close(fd) }
        fd = -1
        return WorkerCgroup.removeTree(path)
    }
}
