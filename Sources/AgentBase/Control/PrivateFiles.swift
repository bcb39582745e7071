import Foundation

/// Creates the runtime's own folders and files (the run folder, pidfile, socket folder, log,
/// store, manifest cache) with fixed modes, whatever the umask: a user who runs the agent
/// with `umask 000` must not get a world-writable `.agent/` or a world-readable store.
/// Folders are 0700, files 0600 (the pidfile 0644). Existing folders and files keep theirs.
public enum PrivateFiles {
    /// Mode of the folders the runtime creates.
    public static let folderMode: mode_t = 0o700
    /// Mode of the files it creates.
    public static let fileMode: mode_t = 0o600

    /// Creates `path` and every missing folder above it, each with `mode` exactly. Returns the
    /// folders it created.
    @discardableResult
    public static func makeDirectories(_ path: String, mode: mode_t = folderMode) throws -> [String] {
        let absolute = AgentPaths.absolute(path)
        var missing: [String] = []
        var current = absolute
        var info = stat()
        while !current.isEmpty, current != "/", stat(current, &info) != 0 {
            guard errno == ENOENT else { throw Failure(path: current, errno) }
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        if missing.isEmpty, (info.st_mode & S_IFMT) != S_IFDIR {
            throw Failure(path: absolute, ENOTDIR)
        }
        var created: [String] = []
        for folder in missing.reversed() {
            if mkdir(folder, mode) != 0 {
                // Another process may have made it meanwhile: then it is its folder.
                guard errno == EEXIST else { throw Failure(path: folder, errno) }
                continue
            }
            // mkdir's mode passed through the umask; set exactly what was asked.
            _ = chmod(folder, mode)
            created.append(folder)
        }
        return created
    }

    /// Opens `path` with `flags | O_CREAT`; a file this call creates gets `mode` exactly.
    /// Returns the descriptor, or -1 with errno set.
    public static func open(_ path: String, flags: Int32, mode: mode_t = fileMode) -> Int32 {
        let created = Glibc.open(path, flags | O_CREAT | O_EXCL | O_CLOEXEC, mode)
        if created >= 0 {
            _ = fchmod(created, mode)
            return created
        }
        guard errno == EEXIST else { return -1 }
        return Glibc.open(path, flags | O_CLOEXEC)
    }

    /// Creates the file if it does not exist (with `mode` exactly) and leaves it closed: for
    /// files another library opens, such as the SQLite database (whose WAL and shared-memory
    /// files take the database file's mode).
    public static func create(_ path: String, mode: mode_t = fileMode) throws {
        let fd = open(path, flags: O_RDWR, mode: mode)
        guard fd >= 0 else { throw Failure(path: path, errno) }
        Glibc.close(fd)
    }

    /// Writes `bytes` to a temporary file beside `path` (with `mode` exactly) and renames it
    /// over `path`: a reader never sees half a file.
    public static func write(_ bytes: [UInt8], atomicallyTo path: String, mode: mode_t = fileMode) throws {
        let temporary = path + ".tmp-\(getpid())"
        unlink(temporary)
        let fd = open(temporary, flags: O_WRONLY | O_TRUNC, mode: mode)
        guard fd >= 0 else { throw Failure(path: temporary, errno) }
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + written, $0.count - written) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let code = errno
                Glibc.close(fd)
                unlink(temporary)
                throw Failure(path: temporary, code)
            }
            written += n
        }
        Glibc.close(fd)
        guard rename(temporary, path) == 0 else {
            let code = errno
            unlink(temporary)
            throw Failure(path: path, code)
        }
    }

    /// A folder or file that could not be created.
    public struct Failure: Error, CustomStringConvertible {
        public var path: String
        public var code: Int32
        package init(path: String, _ code: Int32) {
            self.path = path
            self.code = code
        }
        public var description: String { "cannot create \(path): \(String(cString: strerror(code)))" }
    }
}
