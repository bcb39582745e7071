import AgentCore
import Foundation
import Synchronization

/// The log file of a detached agent (`agent-control start`): the log handler and the console
/// write their lines through it, and stdout and stderr point at it too (for what else writes
/// there). Rotated by size (``LogSettings``: when a line would take it past `max_bytes`,
/// `agent.log` becomes `agent.log.1`, … and the oldest beyond `keep` goes) and reopened on
/// SIGUSR1, for logrotate and the like, which move the file away and signal.
///
/// Any thread: the file is behind a lock, and `dup2` swaps stdout and stderr atomically.
public final class AgentLogFile: Sendable {
    public let path: String
    private let state: Mutex<State>

    package struct State {
        package var fd: Int32 = -1
        /// Bytes in the file, as far as this process knows (resynchronised at each open).
        package var size = 0
        package var settings = LogSettings()
    }

    /// Why the file cannot be opened.
    public struct Failure: Error, CustomStringConvertible {
        public var code = "log_file"
        public var message: String
        public var description: String { message }
    }

    /// Opens (creates, 0600) `path` for appending and points stdout and stderr at it.
    public init(path: String, settings: LogSettings = LogSettings()) throws(Failure) {
        self.path = path
        var initial = State()
        initial.settings = settings
        let opened = Self.open(path)
        guard case .success(let (fd, size)) = opened else {
            if case .failure(let failure) = opened { throw failure }
            throw Failure(message: "cannot open the log file \(path)")
        }
        initial.fd = fd
        initial.size = size
        Self.pointStandardStreams(at: fd)
        state = Mutex(initial)
    }

    deinit { state.withLock { if $0.fd >= 0 { close($0.fd) } } }

    /// New rotation settings (the settings' `log` section, at start and on each reload).
    public func configure(_ settings: LogSettings) {
        state.withLock { $0.settings = settings }
    }

    /// Appends `bytes` (whole lines), rotating between two lines whenever the next would take
    /// the file past `max_bytes` (an empty file takes any line, however long).
    public func write(_ bytes: UnsafeRawBufferPointer) {
        guard !bytes.isEmpty, let base = bytes.baseAddress else { return }
        state.withLock { state in
            var start = 0
            while start < bytes.count {
                // The most whole lines from `start` that fit in what is left of the file.
                let room = state.settings.maximumBytes - state.size
                var end = start
                while end < bytes.count {
                    let newline = memchr(base + end, 10, bytes.count - end)
                    let lineEnd = newline.map { base.distance(to: UnsafeRawPointer($0)) + 1 } ?? bytes.count
                    if lineEnd - start > room, end > start || state.size > 0 { break }
                    end = lineEnd
                }
                if end == start {
                    rotate(&state)
                    // A failed rotation counts from zero: the line goes where the log now is.
                    if state.size > 0 { state.size = 0 }
                    continue
                }
                append(UnsafeRawBufferPointer(rebasing: bytes[start..<end]), to: &state)
                start = end
            }
        }
    }

    private func append(_ bytes: UnsafeRawBufferPointer, to state: inout State) {
        guard state.fd >= 0 else { return }
        var offset = 0
        while offset < bytes.count {
            let n = Glibc.write(state.fd, bytes.baseAddress! + offset, bytes.count - offset)
            if n < 0 { if errno == EINTR { continue }; break }
            offset += n
        }
        state.size += offset
    }

    public func write(_ text: String) {
        var copy = text
        copy.withUTF8 { write(UnsafeRawBufferPointer($0)) }
    }

    /// Opens `path` anew (SIGUSR1): after the file was moved away, a new one is created.
    /// Returns why it failed, or nil.
    @discardableResult
    public func reopen() -> String? {
        state.withLock { state in reopen(&state) }
    }

    /// Reopens when `path` is no longer the open file (moved or removed meanwhile, e.g. while
    /// SIGUSR1 could not be handled yet). Returns whether it did.
    @discardableResult
    public func reopenIfMoved() -> Bool {
        state.withLock { state in
            var open = stat(), named = stat()
            guard fstat(state.fd, &open) == 0 else { return reopen(&state) == nil }
            if stat(path, &named) == 0, named.st_dev == open.st_dev, named.st_ino == open.st_ino { return false }
            return reopen(&state) == nil
        }
    }

    private func reopen(_ state: inout State) -> String? {
        switch Self.open(path) {
        case .failure(let failure):
            // Keep writing where we were: a line lost is worse than a line in the old file.
            return failure.message
        case .success(let (fd, size)):
            Self.pointStandardStreams(at: fd)
            if state.fd >= 0 { close(state.fd) }
            state.fd = fd
            state.size = size
            return nil
        }
    }

    /// `path` → `path.1` → … → `path.keep`, the oldest removed, then a new `path`.
    private func rotate(_ state: inout State) {
        let keep = state.settings.keep
        var problem: String?
        func note(_ text: String) { problem = problem ?? "\(text): \(String(cString: strerror(errno)))" }
        if keep == 0 {
            if unlink(path) != 0, errno != ENOENT { note("cannot remove \(path)") }
        } else {
            if unlink("\(path).\(keep)") != 0, errno != ENOENT { note("cannot remove \(path).\(keep)") }
            for index in stride(from: keep - 1, through: 1, by: -1) where rename("\(path).\(index)", "\(path).\(index + 1)") != 0 && errno != ENOENT {
                note("cannot rename \(path).\(index)")
            }
            if rename(path, "\(path).1") != 0, errno != ENOENT { note("cannot rename \(path) to \(path).1") }
        }
        if let failure = reopen(&state) { problem = problem ?? failure }
        if let problem {
            // Said in the file itself; counting from zero, the next attempt waits for another
            // `max_bytes` rather than coming on every line.
            let line = "log rotation failed: \(problem); the log goes on in \(path)\n"
            _ = line.withCString { Glibc.write(state.fd, $0, strlen($0)) }
            state.size = 0
        }
    }

    private static func open(_ path: String) -> Result<(Int32, Int), Failure> {
        let fd = PrivateFiles.open(path, flags: O_WRONLY | O_APPEND)
        guard fd >= 0 else { return .failure(Failure(message: "cannot open the log file \(path): \(String(cString: strerror(errno)))")) }
        var info = stat()
        let size = fstat(fd, &info) == 0 ? Int(info.st_size) : 0
        return .success((fd, size))
    }

    /// Whatever else writes to stdout or stderr (a crash report, a child) lands in the file too.
    private static func pointStandardStreams(at fd: Int32) {
        _ = dup2(fd, 1)
        _ = dup2(fd, 2)
    }
}
