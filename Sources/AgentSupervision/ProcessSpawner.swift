import AgentCore
import CAgentSystem
import Foundation

/// Starts child processes with `posix_spawn` (through the C shim): no `fork` of a threaded
/// Swift process, explicit fds, a fresh signal mask, an optional new process group.
public enum ProcessSpawner {
    /// The user's processes and threads (`ulimit -u`) a supervisor keeps for its own threads.
    public static let processesKept = 64

    /// From now on, what this process spawns may run at most its own `ulimit -u` less
    /// ``processesKept`` (at most a quarter of it), soft and hard: a command or module that forks
    /// to the limit leaves the supervisor room for its threads (short of them its loop waited a
    /// second per thread asked, and the HTTP front did not start). Called once, before the
    /// supervisor's first spawn.
    public static func keepProcessesForSelf() {
        agent_keep_processes_for_self(UInt(processesKept))
    }

    /// Spawns `path`. `channel` becomes fd 3 in the child (-1: none); `stdin` its stdin (-1:
    /// /dev/null); `directory` its working directory (nil: the caller's); `cgroup` an open
    /// cgroup folder the child starts in, before its first instruction (-1: the caller's);
    /// `joins` open `cgroup.procs` files of further (v1) cgroups it joins before exec (only
    /// with `cgroup`).
    public static func spawn(
        path: String, arguments: [String], environment: [String: String],
        stdin: Int32 = -1, stdout: Int32, stderr: Int32, channel: Int32, directory: String? = nil,
        newGroup: Bool, newSession: Bool = false, cgroup: Int32 = -1, joins: [Int32] = []
    ) -> Result<pid_t, SpawnError> {
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer {
            argv.forEach { free($0) }
            envp.forEach { free($0) }
        }
        var pid: pid_t = 0
        let group: Int32 = newSession ? 2 : newGroup ? 1 : 0
        let rc = joins.withUnsafeBufferPointer {
            agent_spawn_into(path, &argv, &envp, stdin, stdout, stderr, channel, directory, group, cgroup,
                             $0.baseAddress, Int32($0.count), &pid)
        }
        guard rc == 0 else {
            // clone3 into a cgroup removed since it was opened fails as a missing program would.
            let removed = rc == ENOENT && cgroup >= 0 && faccessat(cgroup, "cgroup.procs", F_OK, 0) != 0
            return .failure(SpawnError(path: path, errno: rc, cgroupRemoved: removed))
        }
        return .success(pid)
    }

    public static func exitCode(_ status: Int32) -> Int32? {
        (status & 0x7F) == 0 ? (status >> 8) & 0xFF : nil
    }

    public static func termSignal(_ status: Int32) -> Int32 { status & 0x7F }

    /// Why a spawn failed.
    public struct SpawnError: Error, CustomStringConvertible {
        public var path: String
        public var errno: Int32
        /// The cgroup it was to start in had been removed (ENOENT, though the program is there).
        public var cgroupRemoved = false
        public var description: String {
            guard !cgroupRemoved else {
                return "cannot start \(path): the workers' cgroup was removed under this agent (by hand, or by another agent started from this run folder after its pidfile was removed); stop this agent and start it again"
            }
            if isForkServerRequest, errno == EHOSTDOWN {
                return "cannot start \(path): the fork server is stopped (by SIGSTOP or a debugger), and is killed"
            }
            return "cannot start \(path): \(String(cString: strerror(errno)))"
        }

        /// Whether it failed for lack of descriptors, memory or processes: a start worth
        /// trying again later.
        public var isLackOfResources: Bool { [EMFILE, ENFILE, ENOMEM, EAGAIN, ENOBUFS].contains(errno) }

        /// Whether the fork server failed the request (not the supervisor's preparations).
        package var isForkServerRequest: Bool { path == ForkServer.requestDescription }

        package init(path: String, errno: Int32, cgroupRemoved: Bool = false) {
            self.path = path
            self.errno = errno
            self.cgroupRemoved = cgroupRemoved
        }
    }
}
