import CAgentSystem
import Foundation

/// The agent's settings file as the settings commands read and write it: its bytes exactly as
/// on disk, a hash of them (what a client read, for `if_match`), and the atomic write.
struct SettingsFile: Sendable {
    /// The file's absolute path, as the agent was started with it.
    let path: String

    /// The file's bytes and their hash.
    struct Contents: Sendable {
        var bytes: [UInt8]
        var hash: String
    }

    /// Reads the file (a regular file of at most 16 MiB, as ``AgentSettings/load(file:)`` reads it).
    func read() throws(SettingsCommandError) -> Contents {
        do {
            let bytes = [UInt8](try AgentSettings.readFile(path))
            return Contents(bytes: bytes, hash: Self.hash(bytes))
        } catch {
            throw SettingsCommandError(.unavailable, error.issues.first?.message ?? "\(error)")
        }
    }

    /// What tells one version of the file from another without reading it: its inode, size and
    /// modification time. An edit in place changes the time and mostly the size; an editor that
    /// writes a new file and renames it changes the inode.
    struct Identity: Equatable, Sendable {
        var inode: UInt64
        var size: Int64
        var modified: timespec

        static func == (a: Identity, b: Identity) -> Bool {
            a.inode == b.inode && a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
        }

        /// The identity of the file at `path` (links followed), or nil when it cannot be read.
        init?(path: String) {
            var info = stat()
            guard stat(path, &info) == 0 else { return nil }
            inode = UInt64(info.st_ino)
            size = Int64(info.st_size)
            modified = info.st_mtim
        }
    }

    /// Reads the file as ``read()`` does, with its identity; throws a conflict when it changed
    /// while it was read.
    func readWithIdentity() throws(SettingsCommandError) -> (contents: Contents, identity: Identity) {
        let before = Identity(path: path)
        let contents = try read()
        guard let before, Identity(path: path) == before else {
            throw SettingsCommandError(.conflict, "\(path) changed on disk while it was read; read it again and redo the change")
        }
        return (contents, before)
    }

    /// A hash of the file's bytes, which changes with any change of them (FNV-1a, 64 bits, and
    /// the length). Not a cryptographic hash: it tells an edit that raced another, nothing more.
    static func hash(_ bytes: [UInt8]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in bytes {
            hash ^= UInt64(byte)
            hash = hash &* 0x0000_0100_0000_01b3
        }
        return String(hash, radix: 16).leftPadded(to: 16) + "-" + String(bytes.count)
    }

    /// Replaces the file's contents atomically: a temporary file in the same folder gets the
    /// bytes, the file's mode (and owner, where allowed) and an fsync, then is renamed over the
    /// file, and the folder is synced. A reader sees the old file or the new one, never a part;
    /// a failure leaves the file as it was and no temporary file. A symbolic link is followed:
    /// its target is replaced, the link stays.
    ///
    /// `expected`: the version the change was made to. The new file is swapped in with the old
    /// in one step and the file swapped out compared with it: an edit by hand that landed after
    /// the change was checked is put back, and the change refused as a conflict (a rename after
    /// a last look left a window of milliseconds in which such an edit was overwritten).
    func write(_ bytes: [UInt8], replacing expected: Identity? = nil) throws(SettingsCommandError) {
        let target = Self.resolvingLinks(path)
        let folder = (target as NSString).deletingLastPathComponent
        var info = stat()
        guard stat(target, &info) == 0 else { throw failure("cannot read the mode of \(target)") }
        let temporary = folder + "/." + (target as NSString).lastPathComponent + ".\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, info.st_mode & 0o7777)
        guard fd >= 0 else { throw failure("cannot create a temporary file in \(folder) to write the settings") }
        var written = false
        defer {
            if !written { unlink(temporary) }
        }
        func fill() throws(SettingsCommandError) {
            defer { close(fd) }
            // The mode exactly (open's passed through the umask); the owner where allowed.
            guard fchmod(fd, info.st_mode & 0o7777) == 0 else { throw failure("cannot set the mode of \(temporary)") }
            _ = fchown(fd, info.st_uid, info.st_gid)
            var offset = 0
            while offset < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + offset, $0.count - offset) }
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { throw failure("cannot write \(temporary)") }
                offset += n
            }
            guard fsync(fd) == 0 else { throw failure("cannot sync \(temporary) to disk") }
        }
        try fill()
        try put(temporary, over: target, replacing: expected)
        written = true
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
    }

    /// Moves `temporary` (the new file) to `target`; with `expected`, only over that version of
    /// it. Where the file system cannot swap two names, a rename after a last look.
    private func put(_ temporary: String, over target: String, replacing expected: Identity?) throws(SettingsCommandError) {
        guard let expected else {
            guard rename(temporary, target) == 0 else { throw failure("cannot rename \(temporary) to \(target)") }
            return
        }
        let swapped = agent_rename_exchange(temporary, target)
        if swapped == EINVAL || swapped == ENOSYS {
            guard Identity(path: target) == expected else { throw Self.conflict(path) }
            guard rename(temporary, target) == 0 else { throw failure("cannot rename \(temporary) to \(target)") }
            return
        }
        guard swapped == 0 else {
            errno = swapped
            throw failure("cannot swap \(temporary) with \(target)")
        }
        // `temporary` now names what `target` was an instant ago.
        guard Identity(path: temporary) == expected else {
            // The edit goes back; were the swap back refused, the edit is renamed over ours.
            if agent_rename_exchange(temporary, target) != 0 { _ = rename(temporary, target) }
            throw Self.conflict(path)
        }
        unlink(temporary)
    }

    static func conflict(_ path: String) -> SettingsCommandError {
        SettingsCommandError(.conflict, "\(path) changed on disk while the change was checked; read it again and redo the change (the edit on disk was kept)")
    }

    private func failure(_ what: String) -> SettingsCommandError {
        SettingsCommandError(.unavailable, "\(what): \(String(cString: strerror(errno))); the settings file was not changed")
    }

    /// The path with symbolic links resolved (the path itself when that fails).
    static func resolvingLinks(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}

extension String {
    fileprivate func leftPadded(to width: Int) -> String {
        count >= width ? self : String(repeating: "0", count: width - count) + self
    }
}
