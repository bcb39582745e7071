import Foundation
import Logging

/// The checks that keep another local user from steering the agent through its run folder:
/// what is in it (the pidfile, the control socket, the `workers` record, which the next start
/// reads to kill what a killed run left) must have been written by the agent's own user.
///
/// - The run folder must be a folder (not a link) owned by the agent's user and writable by
///   no one else. One the agent made (this start, or its default `.agent/run`) has its mode set
///   back to 0700; any other is refused at start.
/// - The `workers` record must be a regular file owned by the agent's user and writable by no
///   one else; otherwise the start is refused (its content would choose what the agent kills).
public enum RunFolder {
    /// Why a run folder or record is refused.
    public struct Refusal: Error, CustomStringConvertible, Sendable {
        /// `run_folder_not_folder`, `run_folder_owner`, `run_folder_mode`, `workers_record_owner`,
        /// `workers_record_mode`, `workers_record_unreadable`, `agent_running_here`.
        public var code: String
        public var message: String
        public var description: String { message }

        /// A refusal with its code and a message that says how to go on.
        public init(code: String, message: String) {
            self.code = code
            self.message = message
        }
    }

    /// Checks the run folder `path` before anything is written in it. `madeByAgent`: the
    /// agent made it (this start, or it is the agent's default run folder), so a mode that lets
    /// others write is repaired (0700, logged) rather than refused.
    public static func check(_ path: String, madeByAgent: Bool, logger: Logger) throws(Refusal) {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw Refusal(code: "run_folder_not_folder", message: "cannot use the run folder \(path): \(String(cString: strerror(errno))); nothing was started")
        }
        guard info.st_mode & S_IFMT == S_IFDIR else {
            throw Refusal(code: "run_folder_not_folder", message: "the run folder \(path) is not a folder (\(info.st_mode & S_IFMT == S_IFLNK ? "a symbolic link" : "a file")); nothing was started. Give a folder of this agent's user (--run-dir or AGENT_RUN_DIR), e.g. one made with `mkdir -m 700`")
        }
        let user = geteuid()
        guard info.st_uid == user else {
            throw Refusal(code: "run_folder_owner", message: "the run folder \(path) belongs to uid \(info.st_uid), not to this agent's user (uid \(user)): whoever owns it could plant a pidfile, socket or `workers` record that this agent acts on; nothing was started. Use a folder of uid \(user) that no one else can write (mkdir -m 700 DIR; --run-dir DIR)")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 != 0 else { return }
        if madeByAgent {
            guard chmod(path, PrivateFiles.folderMode) == 0 else {
                throw Refusal(code: "run_folder_mode", message: "the run folder \(path) is writable by others (mode \(octal(mode))) and cannot be made private: \(String(cString: strerror(errno))); nothing was started. Run chmod 700 \(path)")
            }
            logger.notice("the run folder \(path) was writable by others (mode \(octal(mode))); set to 0700")
            return
        }
        let writers = [mode & 0o020 != 0 ? "its group" : nil, mode & 0o002 != 0 ? "all users" : nil].compactMap { $0 }.joined(separator: " and ")
        throw Refusal(code: "run_folder_mode", message: "the run folder \(path) is writable by \(writers) (mode \(octal(mode))): another user could plant a `workers` record there that makes this agent kill their choice of process at its next start; nothing was started. Use a folder no one else can write: chmod 700 \(path) (after checking what is in it), or --run-dir a new one")
    }

    /// The text of the `workers` record at `path`, nil when there is none; refused when it is
    /// not a regular file of the agent's user that no one else can write.
    package static func readRecord(_ path: String) throws(Refusal) -> String? {
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK)
        if fd < 0 {
            if errno == ENOENT { return nil }
            throw Refusal(code: "workers_record_unreadable", message: "cannot read \(path), the record of what the previous run started: \(String(cString: strerror(errno)))\(errno == ELOOP ? " (it is a symbolic link)" : ""); nothing was started. Check who put it there, remove it (rm \(path)) and start again")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw Refusal(code: "workers_record_unreadable", message: "\(path), the record of what the previous run started, is not a regular file; nothing was started. Check who put it there, remove it (rm \(path)) and start again")
        }
        let user = geteuid()
        guard info.st_uid == user else {
            throw Refusal(code: "workers_record_owner", message: "\(path), the record of what the previous run started, belongs to uid \(info.st_uid), not to this agent's user (uid \(user)): this agent did not write it, and it would choose what this start kills; nothing was started (nothing was killed). Check who wrote it, remove it (rm \(path)) and start again")
        }
        let mode = info.st_mode & 0o7777
        guard mode & 0o022 == 0 else {
            throw Refusal(code: "workers_record_mode", message: "\(path), the record of what the previous run started, is writable by others (mode \(octal(mode)); the agent writes it 0600): anyone could have changed what this start kills; nothing was started (nothing was killed). Check it, remove it (rm \(path)) and start again")
        }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 64 << 10)
        while bytes.count < 16 << 20 {
            let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { break }
            bytes += buffer[0..<n]
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    package static func octal(_ mode: mode_t) -> String {
        "0" + String(mode, radix: 8)
    }
}
