import Foundation
import Logging

/// systemd's journal on the other end of a stream: `JOURNAL_STREAM=<dev>:<inode>` names the
/// socket systemd connected stdout and stderr to, and a process whose stream is that socket
/// writes lines as the journal wants them (sd-daemon(3)): no timestamp of its own (the journal
/// stamps each line) and a `<N>` syslog priority prefix, so that `journalctl -p warning` works.
/// Checked on the descriptor itself: a stream that was redirected elsewhere gets plain lines.
public enum JournalStream {
    /// Whether `fd` is the journal's stream.
    public static func isJournal(fd: Int32, environment: [String: String] = ProcessInfo.processInfo.environment) -> Bool {
        guard let value = environment["JOURNAL_STREAM"] else { return false }
        let parts = value.split(separator: ":")
        guard parts.count == 2, let device = UInt64(parts[0]), let inode = UInt64(parts[1]) else { return false }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return false }
        return UInt64(info.st_dev) == device && UInt64(info.st_ino) == inode
    }

    /// The syslog priority of a level: 7 debug … 2 critical.
    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    /// `text` with every line prefixed by `<priority>`: the journal reads a message's later
    /// lines as lines of their own.
    package static func prefixed(_ text: String, priority: Int) -> String {
        "<\(priority)>" + text.replacingOccurrences(of: "\n", with: "\n<\(priority)>")
    }
}
