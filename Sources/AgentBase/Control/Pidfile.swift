import AgentCore
import Foundation

/// A pidfile held with an exclusive `flock` for the life of the agent. A pidfile whose lock is
/// free is stale (its agent died without removing it) and is simply taken over.
public final class Pidfile {
    public let path: String
    private var fd: Int32 = -1

    public init(path: String) { self.path = path }

    deinit { if fd >= 0 { close(fd) } }

    /// Why the pidfile cannot be taken.
    public struct HeldError: Error, CustomStringConvertible {
        public var path: String
        public var pid: Int32?
        public var description: String {
            "the agent is already running (pid \(pid.map(String.init) ?? "unknown"), pidfile \(path)); stop it with `agent-control stop` first"
        }

        package init(path: String, pid: Int32? = nil) {
            self.path = path
            self.pid = pid
        }
    }

    /// The pid could not be written to the pidfile.
    public struct WriteError: Error, CustomStringConvertible {
        public var path: String
        public var reason: String
        public var description: String {
            "cannot write the agent's pid to \(path) (\(reason)): without it the agent cannot be found; free the disk, or give the file another place (--pidfile, --run-dir)"
        }
    }

    /// Takes the lock and writes our pid. Throws ``HeldError`` if a live agent holds it.
    public func acquire() throws {
        // 0644 whatever the umask: others may read the pid, never write it.
        let fd = PrivateFiles.open(path, flags: O_RDWR, mode: 0o644)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            close(fd)
            throw HeldError(path: path, pid: Self.readPID(path))
        }
        let text = "\(getpid())\n"
        // An empty pidfile (a full disk) hid the running agent from `stop`, and let a later
        // start say "started" for a process that refused.
        let written = ftruncate(fd, 0) == 0 ? text.withCString { write(fd, $0, strlen($0)) } : -1
        guard written == text.utf8.count else {
            let reason = written < 0 ? String(cString: strerror(errno)) : "a short write"
            // Left behind empty, it would name no one: removed (a regular file only).
            var info = stat()
            if fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG { unlink(path) }
            close(fd)
            throw WriteError(path: path, reason: reason)
        }
        self.fd = fd
    }

    /// Removes the pidfile (while still holding the lock) at a clean exit.
    public func release() {
        guard fd >= 0 else { return }
        unlink(path)
        close(fd)
        fd = -1
    }

    /// The pid of the agent holding the pidfile, or nil if none does (no file, or stale).
    public static func holder(of path: String) -> Int32? {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        if flock(fd, LOCK_SH | LOCK_NB) == 0 { return nil }
        return readPID(path)
    }

    /// Why the pid in the pidfile at `path` cannot be trusted to be the agent's (nil when it
    /// can): a file that is not a regular file of this user, or that others can write, may
    /// name any process.
    package static func doubt(_ path: String) -> String? {
        var info = stat()
        guard lstat(path, &info) == 0 else { return "cannot read \(path): \(String(cString: strerror(errno)))" }
        guard info.st_mode & S_IFMT == S_IFREG else { return "\(path) is not a regular file" }
        guard info.st_uid == geteuid() else { return "\(path) belongs to uid \(info.st_uid), not to this user (uid \(geteuid()))" }
        guard info.st_mode & 0o022 == 0 else { return "\(path) is writable by others (mode \(RunFolder.octal(info.st_mode & 0o7777)))" }
        return nil
    }

    package static func readPID(_ path: String) -> Int32? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines))
    }
}
