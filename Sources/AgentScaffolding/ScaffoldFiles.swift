import Foundation

/// Creates the files and folders the scaffolding writes: files with mode 0644 and folders
/// 0755, both less what the umask takes away, so never writable by group or others. Foundation
/// writes 0666 and 0777 less the umask: under `umask 000`, `create-agent` left a
/// `settings.json` (which decides what code the agent runs) and its folders world-writable.
/// A file is written to a temporary file beside it (created with its final mode, never
/// looser for a moment) and renamed over it.
enum ScaffoldFiles {
    static let fileMode: mode_t = 0o644
    static let folderMode: mode_t = 0o755

    /// Creates `path` and every missing folder above it; returns those it created, outermost
    /// first.
    @discardableResult
    static func makeDirectories(_ path: String) throws(ScaffoldingError) -> [String] {
        var missing: [String] = []
        var current = URL(fileURLWithPath: path).standardizedFileURL.path
        var info = stat()
        while current != "/", !current.isEmpty, stat(current, &info) != 0 {
            guard errno == ENOENT else { throw failure("cannot create the folder", current) }
            missing.append(current)
            current = (current as NSString).deletingLastPathComponent
        }
        var created: [String] = []
        for folder in missing.reversed() {
            if mkdir(folder, folderMode) == 0 {
                created.append(folder)
            } else if errno != EEXIST {
                let error = failure("cannot create the folder", folder)
                for made in created.reversed() { rmdir(made) }
                throw error
            }
        }
        return created
    }

    /// Writes `text` to `path` whole. An existing file keeps its mode when `keepMode`.
    static func write(_ text: String, to path: String, keepMode: Bool = false) throws(ScaffoldingError) {
        try write(bytes: Array(text.utf8), to: path, keepMode: keepMode)
    }

    /// Writes `bytes` to `path` whole. An existing file keeps its mode when `keepMode`.
    static func write(bytes written: [UInt8], to path: String, keepMode: Bool = false) throws(ScaffoldingError) {
        let temporary = try writeBeside(bytes: written, for: path, keepMode: keepMode)
        try put(temporary, at: path)
    }

    /// Renames `temporary` (from ``writeBeside(bytes:for:keepMode:)``) to `path`; removes it
    /// when it cannot.
    static func put(_ temporary: String, at path: String) throws(ScaffoldingError) {
        guard rename(temporary, path) == 0 else {
            let error = failure("cannot write", path)
            unlink(temporary)
            throw error
        }
    }

    /// Writes `bytes` to a new file in `path`'s folder, with `path`'s mode to be; returns its
    /// path. Its name is short: one made of `path`'s own name could pass the folder's limit
    /// (255 bytes) where `path` does not. With `keepMode`, a file that exists keeps its mode
    /// exactly, whatever the umask, and its owner and group where this user may give them: a
    /// settings file a service reads through its group (0640, `root:agentruntime`) must stay
    /// readable to it after `add-agent-module` edits it (under `umask 077` it became 0600, and
    /// under any umask `root:root`).
    static func writeBeside(bytes written: [UInt8], for path: String, keepMode: Bool = false) throws(ScaffoldingError) -> String {
        var info = stat()
        let kept = keepMode && stat(path, &info) == 0
        let mode = kept ? info.st_mode & 0o7777 : fileMode
        let temporary = (path as NSString).deletingLastPathComponent + "/.scaffold-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        // A kept mode is set once the owner is (never looser than the owner's alone meanwhile).
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, kept ? mode & 0o600 : mode)
        guard fd >= 0 else { throw failure("cannot write", path) }
        // The owner first: giving a file away clears its set-id bits, which the mode then sets.
        if kept {
            _ = fchown(fd, info.st_uid, info.st_gid)
            guard fchmod(fd, mode) == 0 else {
                let error = failure("cannot set the mode of", path)
                close(fd)
                unlink(temporary)
                throw error
            }
        }
        var bytes = written[...]
        while !bytes.isEmpty {
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else {
                let error = failure("cannot write", path)
                close(fd)
                unlink(temporary)
                throw error
            }
            bytes = bytes.dropFirst(n)
        }
        close(fd)
        return temporary
    }

    private static func failure(_ what: String, _ path: String) -> ScaffoldingError {
        ScaffoldingError("write_failed", "\(what): \(String(cString: strerror(errno)))", path: path)
    }
}
