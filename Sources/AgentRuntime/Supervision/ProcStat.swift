import Foundation

/// The fields of /proc/PID/stat that supervision needs.
struct ProcStat: Equatable {
    /// R, S, D, Z, T (stopped by a signal), t (traced)…
    var state: Character
    var parent: pid_t
    var group: pid_t
    var session: pid_t
    /// Clock ticks after boot: with the pid, it names one process for the life of the system.
    var startTime: UInt64

    /// Nil when the process is gone (or /proc cannot be read).
    static func read(_ pid: pid_t) -> ProcStat? {
        guard let data = FileManager.default.contents(atPath: "/proc/\(pid)/stat"),
              let close = data.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        // After the command (which may hold spaces and parentheses): state, ppid, pgrp,
        // session, … starttime is the 20th of them.
        let fields = data[(close + 1)...].split(separator: UInt8(ascii: " ")).map { String(decoding: $0, as: UTF8.self) }
        guard fields.count > 19, let state = fields[0].first, let parent = pid_t(fields[1]), let group = pid_t(fields[2]),
              let session = pid_t(fields[3]), let start = UInt64(fields[19]) else { return nil }
        return ProcStat(state: state, parent: parent, group: group, session: session, startTime: start)
    }

    /// Listed in /proc and not a zombie (a dead orphan stays a zombie where PID 1 does not reap).
    static func isAlive(_ pid: pid_t) -> Bool {
        guard let stat = read(pid) else { return false }
        return stat.state != "Z" && stat.state != "X"
    }
}

extension ProcStat {
    /// A process's CPU time and resident memory, from /proc/PID/stat.
    struct Usage: Equatable {
        /// User and system CPU time of the process itself (not its children), in seconds.
        var cpuSeconds: Double
        var rssBytes: Int

        private static let ticksPerSecond = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
        private static let pageSize = max(1, sysconf(Int32(_SC_PAGESIZE)))

        /// Nil when the process is gone. Read into a buffer on the stack, without Foundation:
        /// `status` reads it for every worker each time it is asked.
        static func read(_ pid: pid_t) -> Usage? {
            withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer -> Usage? in
                let fd = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
                guard fd >= 0 else { return nil }
                defer { close(fd) }
                var count = 0
                while count < buffer.count {
                    let n = Glibc.read(fd, buffer.baseAddress! + count, buffer.count - count)
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { break }
                    count += n
                }
                return parse(UnsafeBufferPointer(rebasing: buffer[0..<count]))
            }
        }

        /// The fields after the command (which may hold spaces and parentheses): utime and
        /// stime are the 12th and 13th (in clock ticks), rss the 22nd (in pages).
        static func parse(_ text: UnsafeBufferPointer<UInt8>) -> Usage? {
            guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
            var field = -1
            var values = [UInt64](repeating: 0, count: 3)
            var inField = false
            for byte in text[(close + 1)...] {
                if byte == UInt8(ascii: " ") || byte == 10 {
                    inField = false
                    continue
                }
                if !inField {
                    inField = true
                    field += 1
                    if field > 21 { break }
                }
                let slot = field == 11 ? 0 : field == 12 ? 1 : field == 21 ? 2 : -1
                guard slot >= 0 else { continue }
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                values[slot] = values[slot] &* 10 &+ UInt64(byte - UInt8(ascii: "0"))
            }
            guard field >= 21 else { return nil }
            let (bytes, overflow) = Int(clamping: values[2]).multipliedReportingOverflow(by: pageSize)
            return Usage(cpuSeconds: Double(values[0] &+ values[1]) / ticksPerSecond, rssBytes: overflow ? .max : bytes)
        }
    }
}
