import Foundation

/// The cgroup (v2) that holds an agent's workers and everything they start, so that one write
/// to its `cgroup.kill` ends them all, even children that left the worker's process group or
/// session. The supervisor makes it (see `WorkerContainment` in AgentRuntime) and names it in
/// the workers' environment; the fork server and each posix_spawn'ed worker move themselves
/// into it before any module code runs, and whatever they fork inherits it.
public enum WorkerCgroup {
    /// The environment variable naming the cgroup's folder.
    public static let environmentKey = "AGENT_WORKER_CGROUP"

    /// Moves the calling process into the cgroup at `path`. Returns an errno value, 0 when done.
    @discardableResult
    public static func join(_ path: String) -> Int32 {
        write("0\n", to: path + "/cgroup.procs")
    }

    /// Kills every process in the cgroup at `path` (`cgroup.kill`, Linux 5.14). Returns an
    /// errno value, 0 when done.
    @discardableResult
    public static func kill(_ path: String) -> Int32 {
        write("1\n", to: path + "/cgroup.kill")
    }

    /// Kills every process in the cgroup at `path` but the caller, which first moves to the
    /// parent cgroup, and removes the cgroup once it is empty (within `timeout` seconds). If
    /// the caller cannot leave, it is killed with the rest and the folder stays.
    public static func killAndRemove(_ path: String, timeout: Double) {
        let parent = URL(fileURLWithPath: path).deletingLastPathComponent().path
        let left = write("\(getpid())\n", to: parent + "/cgroup.procs") == 0
        kill(path)
        guard left else { return }
        let deadline = Date().addingTimeInterval(timeout)
        while isPopulated(path), Date() < deadline { usleep(2_000) }
        rmdir(path)
    }

    /// The pids in the cgroup at `path` (empty when it is gone).
    public static func members(_ path: String) -> [Int32] {
        guard let text = try? String(contentsOfFile: path + "/cgroup.procs", encoding: .utf8) else { return [] }
        return text.split(whereSeparator: \.isNewline).compactMap { Int32($0) }
    }

    /// Whether a process of the cgroup at `path` is still alive (`populated 1` in
    /// `cgroup.events`; zombies no longer count).
    public static func isPopulated(_ path: String) -> Bool {
        guard let text = try? String(contentsOfFile: path + "/cgroup.events", encoding: .utf8) else { return false }
        return text.split(whereSeparator: \.isNewline).contains("populated 1")
    }

    private static func write(_ text: String, to file: String) -> Int32 {
        let fd = open(file, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { return errno }
        defer { close(fd) }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Foundation.write(fd, $0.baseAddress, $0.count) }
        return written == bytes.count ? 0 : (written < 0 ? errno : EIO)
    }
}
