import CAgentSystem
import Foundation

/// The cgroup (v2) that holds an agent's workers and everything they start, so that one write
/// to its `cgroup.kill` ends them all, even children that left the worker's process group or
/// session. The supervisor makes it (see `WorkerContainment` in AgentRuntime), starts the fork
/// server and each worker in its `workers` leaf (clone3 into the cgroup) and names that leaf in
/// the workers' environment (a worker started otherwise joins it before any module code runs);
/// whatever they fork inherits it. Each command run has a cgroup of its own beside the leaf.
public enum WorkerCgroup {
    /// The environment variable naming the workers' cgroup folder (the `workers` leaf).
    public static let environmentKey = "AGENT_WORKER_CGROUP"

    /// Moves the calling process into the cgroup at `path`, unless it is there already (the
    /// fork server and spawned workers start in it through clone3's `CLONE_INTO_CGROUP`).
    /// Returns an errno value, 0 when done. A write to `cgroup.procs` migrates the process even
    /// when that changes nothing, and a migration waits for the kernel's cgroup locks: 17–37 ms
    /// measured on this VM for the fork server, on the path to the first worker.
    @discardableResult
    public static func join(_ path: String) -> Int32 {
        if holds(getpid(), cgroup: path) { return 0 }
        return write("0\n", to: path + "/cgroup.procs")
    }

    /// Whether `pid` is in the cgroup at `path` (listed in its `cgroup.procs`; reading it takes
    /// no lock a migration waits for).
    package static func holds(_ pid: pid_t, cgroup path: String) -> Bool {
        guard let text = ProcFile.read(path + "/cgroup.procs") else { return false }
        let own = String(pid)
        return text.split(separator: "\n").contains { $0 == own }
    }

    /// Kills every process in the cgroup at `path` (`cgroup.kill`, Linux 5.14), and each
    /// member by its pid too: `cgroup.kill` signals a process through its first thread, and
    /// one whose first thread has exited (`pthread_exit`) while others run never acts on it
    /// (seen on Linux 6.x); `kill` of the pid reaches a thread that lives. Returns the
    /// `cgroup.kill` write's errno value, 0 when done.
    @discardableResult
    public static func kill(_ path: String) -> Int32 {
        let written = write("1\n", to: path + "/cgroup.kill")
        for pid in members(path) { Glibc.kill(pid, SIGKILL) }
        return written
    }

    /// The agent's cgroup, whose `workers` leaf is at `path` (the cgroup itself when `path`
    /// is not a `workers` folder).
    public static func agentCgroup(ofWorkers path: String) -> String {
        let url = URL(fileURLWithPath: path)
        return url.lastPathComponent == workersName ? url.deletingLastPathComponent().path : path
    }

    /// The leaf of the agent's cgroup that holds its workers (the runs' cgroups are its siblings).
    public static let workersName = "workers"

    /// Kills every process in the cgroup at `path` and its descendants but the caller, which
    /// first moves to the parent cgroup, and removes the cgroups once they are empty (within
    /// `timeout` seconds). If the caller cannot leave, it is killed with the rest and the
    /// folders stay.
    /// Returns whether the cgroups are gone (removed, or gone already).
    @discardableResult
    public static func killAndRemove(_ path: String, timeout: Double) -> Bool {
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let left = write("\(getpid())\n", to: parent + "/cgroup.procs") == 0
        kill(path)
        guard left else { return false }
        let deadline = Date().addingTimeInterval(timeout)
        while isPopulated(path), Date() < deadline { usleep(2_000) }
        return removeTree(path) == 0
    }

    /// The environment variable naming the agent's folders in cgroup v1 hierarchies, one a line
    /// (where task limits go when v2 lacks the controller; see `CgroupV1Limits` in
    /// AgentSupervision): the fork server removes them with the agent's cgroup when the
    /// supervisor is killed.
    public static let v1FoldersKey = "AGENT_WORKER_CGROUPS_V1"

    /// Removes the agent's v1 folders `list` names (one a line) and the groups under them: each
    /// only if it is an `agent-…` folder (an absolute path without `..`) in a cgroup v1 file
    /// system; the kernel refuses to remove a group that still has a process.
    public static func removeV1Folders(_ list: String) {
        for path in list.split(separator: "\n").map(String.init) where isAgentV1Folder(path) {
            removeTree(path)
        }
    }

    /// Whether `path` names an agent's folder in a cgroup v1 hierarchy.
    static func isAgentV1Folder(_ path: String) -> Bool {
        guard path.hasPrefix("/"), !path.split(separator: "/").contains(".."),
              URL(fileURLWithPath: path).lastPathComponent.hasPrefix("agent-") else { return false }
        // The folder itself, not a link to one: the removal would list the link's target.
        guard let resolved = realpath(path, nil) else { return false }
        defer { free(resolved) }
        return String(cString: resolved) == path && agent_is_cgroup_v1(path) != 0
    }

    /// Removes the (empty) cgroup at `path` and the cgroups under it, deepest first. Returns
    /// 0, or the errno of the first folder that could not be removed (ENOENT counts as done).
    @discardableResult
    public static func removeTree(_ path: String) -> Int32 {
        var first: Int32 = 0
        for child in childFolders(path) {
            let code = removeTree(path + "/" + child)
            if first == 0 { first = code }
        }
        if rmdir(path) != 0, errno != ENOENT, first == 0 { first = errno }
        return first
    }

    /// The pids in the cgroup at `path` and the cgroups under it (empty when it is gone).
    public static func members(_ path: String) -> [Int32] {
        let text = ProcFile.read(path + "/cgroup.procs") ?? ""
        var pids = text.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
        for child in childFolders(path) { pids += members(path + "/" + child) }
        return pids
    }

    /// The cgroups directly under the cgroup at `path`: none without a look at the folder when
    /// its `cgroup.stat` says it has no descendants (a run's cgroup nearly always; the look
    /// lists and stats its twenty-odd interface files, at every run's end).
    static func childFolders(_ path: String) -> [String] {
        if let counts = ProcFile.read(path + "/cgroup.stat"),
           counts.split(whereSeparator: \.isNewline).contains("nr_descendants 0") {
            return []
        }
        return ((try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []).filter { child in
            var info = stat()
            // Subfolders are the child cgroups; the rest are the interface files.
            return lstat(path + "/" + child, &info) == 0 && info.st_mode & S_IFMT == S_IFDIR
        }
    }

    /// Whether a process of the cgroup at `path` is still alive (`populated 1` in
    /// `cgroup.events`; zombies no longer count).
    public static func isPopulated(_ path: String) -> Bool {
        guard let text = ProcFile.read(path + "/cgroup.events") else { return false }
        return text.split(whereSeparator: \.isNewline).contains("populated 1")
    }

    /// Writes `text` to the cgroup file `file` in one write. Returns an errno value, 0 when done.
    @discardableResult
    public static func write(_ text: String, to file: String) -> Int32 {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        return written == bytes.count ? 0 : (written < 0 ? errno : EIO)
    }
}
