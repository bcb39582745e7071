import Foundation

/// What /proc says of a process.
package enum ProcFacts {
    /// The `Key:` line of /proc/PID/status, as text ("" when gone).
    package static func status(_ pid: Int32, _ key: String) -> String {
        let text = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        return text.split(separator: "\n").first { $0.hasPrefix(key + ":") }
            .map { $0.dropFirst(key.count + 1).trimmingCharacters(in: .whitespaces) } ?? ""
    }

    package static func command(_ pid: Int32) -> String {
        ((try? String(contentsOfFile: "/proc/\(pid)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The names of `pid`'s threads (comm), from /proc.
    package static func threadNames(_ pid: Int32) -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/comm", encoding: .utf8) }
            .map { $0.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    /// The state letter of each of `pid`'s threads (from /proc/PID/task/TID/stat).
    package static func threadStates(_ pid: Int32) -> [Character] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        return tasks.compactMap { try? String(contentsOfFile: "/proc/\(pid)/task/\($0)/stat", encoding: .utf8) }
            .compactMap { $0.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first }
    }

    /// When `pid` started, in clock ticks since boot (/proc/PID/stat's 22nd field); nil when
    /// gone. Orders processes by age where their pids cannot: pids wrap at pid_max.
    package static func startTicks(_ pid: Int32) -> UInt64? {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return nil }
        // After the command: the state is the 3rd field, the start time the 22nd.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return fields.count > 19 ? UInt64(fields[19]) : nil
    }

    /// Alive: listed in /proc and not a zombie (in this container PID 1 does not reap).
    package static func isAlive(_ pid: Int32) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let state = stat.split(separator: ")").last?.trimmingCharacters(in: .whitespaces).first else { return false }
        return state != "Z" && state != "X"
    }

    /// The living processes (not zombies) whose command name is `name`.
    package static func living(named name: String) -> [Int32] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap(Int32.init).filter { command($0) == name && isAlive($0) }
    }

    /// Waits until none of `pids` is alive; returns the survivors.
    package static func survivors(of pids: [Int32], within timeout: Double) -> [Int32] {
        let deadline = Date().addingTimeInterval(timeout)
        var alive = pids.filter(isAlive)
        while !alive.isEmpty, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.02)
            alive = alive.filter(isAlive)
        }
        return alive
    }

    /// Waits until each of `pids` runs `command` (a forked child has exec'd).
    package static func waitForCommand(_ command: String, of pids: [Int32], timeout: Double = 10) {
        let deadline = Date().addingTimeInterval(timeout)
        while pids.contains(where: { Self.command($0) != command }), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }
}
