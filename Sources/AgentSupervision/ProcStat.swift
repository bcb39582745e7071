import AgentCore
import Foundation

/// The fields of /proc/PID/stat that supervision needs.
package struct ProcStat: Equatable {
    /// R, S, D, Z, T (stopped by a signal), t (traced)…
    package var state: Character
    package var parent: pid_t
    package var group: pid_t
    package var session: pid_t
    /// Clock ticks after boot: with the pid, it names one process for the life of the system.
    package var startTime: UInt64
    /// The kernel's flags of the process (PF_…).
    package var flags: UInt32 = 0

    /// Nil when the process is gone (or /proc cannot be read).
    package static func read(_ pid: pid_t) -> ProcStat? {
        read(path: "/proc/\(pid)/stat")
    }

    /// A stat file: a process's, or one of its threads' (`/proc/PID/task/TID/stat`).
    private static func read(path: String) -> ProcStat? {
        guard let data = ProcFile.bytes(path),
              let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the command (which may hold spaces and parentheses): state, ppid, pgrp,
        // session, … starttime is the 20th of them.
        let fields = data[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let session = pid_t(fields[3]), let start = UInt64(fields[19]) else { return nil }
        return ProcStat(state: state, parent: parent, group: group, session: session, startTime: start, flags: UInt32(fields[6]) ?? 0)
    }

    /// PF_EXITING: the thread has begun to exit.
    private static let exitingFlag: UInt32 = 0x4

    /// Whether the process is already on its way out: gone, a SIGKILL pending for the whole
    /// process (a zygote its fork server's death has just killed, say), or no thread left that
    /// is neither a zombie nor exiting. A process whose first thread exited (`pthread_exit`)
    /// shows as a zombie with PF_EXITING, and lives on in its other threads: not dying.
    package static func isDying(_ pid: pid_t) -> Bool {
        guard read(pid) != nil else { return true }
        // The signals pending for the process, in hex; SIGKILL is bit 8.
        if let pending = status(pid, "ShdPnd").flatMap({ UInt64($0, radix: 16) }), pending & (1 << UInt64(SIGKILL - 1)) != 0 { return true }
        let threads = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return !threads.contains { thread in
            guard let stat = read(path: "/proc/\(pid)/task/\(thread)/stat") else { return false }
            return stat.state != "Z" && stat.state != "X" && stat.flags & exitingFlag == 0
        }
    }

    /// The value of `field` in /proc/PID/status (`TracerPid`, `ShdPnd`…), trimmed; nil when
    /// the process is gone or has no such field.
    package static func status(_ pid: pid_t, _ field: String) -> String? {
        guard let text = ProcFile.read("/proc/\(pid)/status") else { return nil }
        let prefix = field + ":"
        return text.split(separator: "\n").first { $0.hasPrefix(prefix) }
            .map { $0.dropFirst(prefix.count).trimmingCharacters(in: .whitespaces) }
    }

    /// Whether the process is stopped: by a signal (T) or by a debugger (t).
    package static func isStopped(_ pid: pid_t) -> Bool {
        guard let state = read(pid)?.state else { return false }
        return state == "T" || state == "t"
    }

    /// Listed in /proc and not a zombie (a dead orphan stays a zombie where PID 1 does not reap).
    package static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = read(pid) else { return false }
        return stat.state != "Z" && stat.state != "X"
    }

    /// A process's command name (`/proc/<pid>/comm`), "?" when it is gone.
    package static func commandName(of pid: pid_t) -> String {
        let name = (ProcFile.read("/proc/\(pid)/comm") ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
        // A process names itself (PR_SET_NAME): a control character in a log line would forge
        // another line, or recolour and clear the reader's terminal.
        return String(String.UnicodeScalarView(name.unicodeScalars.map { TerminalText.isControl($0) ? "?" : $0 }))
    }
}
