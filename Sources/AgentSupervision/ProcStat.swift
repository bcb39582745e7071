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

    /// Nil when the process is gone (or /proc cannot be read).
    package static func read(_ pid: pid_t) -> ProcStat? {
        guard let data = ProcFile.bytes("/proc/\(pid)/stat"),
              let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the command (which may hold spaces and parentheses): state, ppid, pgrp,
        // session, … starttime is the 20th of them.
        let fields = data[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let session = pid_t(fields[3]), let start = UInt64(fields[19]) else { return nil }
        return ProcStat(state: state, parent: parent, group: group, session: session, startTime: start)
    }

    /// Listed in /proc and not a zombie (a dead orphan stays a zombie where PID 1 does not reap).
    package static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = read(pid) else { return false }
        return stat.state != "Z" && stat.state != "X"
    }

    /// A process's command name (`/proc/<pid>/comm`), "?" when it is gone.
    package static func commandName(of pid: pid_t) -> String {
        (ProcFile.read("/proc/\(pid)/comm") ?? "?").trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
