import Foundation
import Synchronization

/// The temporary folders a test process made, removed when it exits: a run of the whole suite
/// makes a few gigabytes of them (Debian packages, generated agents, module builds), and a
/// contributor's `scripts/flaky.sh` loop would otherwise fill the disk. With
/// `AGENT_TEST_KEEP_TEMPORARY=1` they stay, to read an agent's logs after a failure.
package enum TemporaryFolders {
    private struct Registry: ~Copyable {
        var paths: [String] = []
        var owner: pid_t = 0
    }

    private static let registry = Mutex(Registry())

    private static let keep: Bool = {
        let value = ProcessInfo.processInfo.environment["AGENT_TEST_KEEP_TEMPORARY"] ?? ""
        return !value.isEmpty && value != "0"
    }()

    /// Removes `path` with everything in it when this process exits normally.
    package static func removeAtExit(_ path: String) {
        guard !keep else { return }
        let first = registry.withLock { registry in
            registry.paths.append(path)
            guard registry.owner == 0 else { return false }
            registry.owner = getpid()
            return true
        }
        if first { atexit { TemporaryFolders.removeAll() } }
    }

    /// One `rm -rf` for all of them, waited for, so that the next run finds the space free. Only
    /// in the process that made them: a child forked by a test that calls `exit` runs the same
    /// handlers, and must not remove folders its parent still uses.
    private static func removeAll() {
        let paths = registry.withLock { registry in
            registry.owner == getpid() ? registry.paths : []
        }
        guard !paths.isEmpty else { return }
        let arguments = ["rm", "-rf", "--one-file-system", "--"] + paths
        var pointers = arguments.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        var child: pid_t = 0
        guard posix_spawn(&child, "/bin/rm", nil, nil, &pointers, environ) == 0 else { return }
        var status: Int32 = 0
        while waitpid(child, &status, 0) < 0 && errno == EINTR {}
    }
}
