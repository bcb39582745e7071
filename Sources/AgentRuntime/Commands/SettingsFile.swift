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
    func write(_ bytes: [UInt8]) throws(SettingsCommandError) {
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
        guard rename(temporary, target) == 0 else { throw failure("cannot rename \(temporary) to \(target)") }
        written = true
        let directory = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 {
            _ = fsync(directory)
            close(directory)
        }
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
