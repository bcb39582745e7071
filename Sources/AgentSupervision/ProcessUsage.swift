import AgentLoop
import Foundation
import Synchronization

/// A process's CPU time and resident memory, from /proc/PID/stat.
public struct ProcessUsage: Equatable, Sendable {
    /// User and system CPU time of the process itself (not its children), in seconds.
    public var cpuSeconds: Double
    public var rssBytes: Int

    private static let ticksPerSecond = Double(max(1, sysconf(Int32(_SC_CLK_TCK))))
    private static let pageSize = max(1, sysconf(Int32(_SC_PAGESIZE)))

    /// Nil when the process is gone. Read into a buffer on the stack, without Foundation:
    /// `status` and `metrics` read it for every worker each time they are asked.
    public static func read(_ pid: pid_t) -> ProcessUsage? {
        read(path: "/proc/\(pid)/stat")
    }

    /// What was read for `pid` less than `age` seconds ago, else read now. Status answers
    /// under load read each worker's /proc file once per `age`, not once per request (the
    /// reads were a third of a status request's CPU under wrk).
    public static func recent(_ pid: pid_t, age: Double = 0.25) -> ProcessUsage? {
        let now = EventLoop.now()
        if let cached = cache.withLock({ $0[pid] }), now - cached.time < age { return cached.usage }
        let usage = read(pid)
        cache.withLock { cache in
            // Bounded: entries of workers long gone go when it grows.
            if cache.count >= 1024 { cache = cache.filter { now - $0.value.time < 5 } }
            if let usage { cache[pid] = (now, usage) } else { cache[pid] = nil }
        }
        return usage
    }

    private static let cache = Mutex<[pid_t: (time: Double, usage: ProcessUsage)]>([:])

    /// The supervisor's own usage.
    public static func ofSelf() -> ProcessUsage? { read(path: "/proc/self/stat") }

    package static func read(path: String) -> ProcessUsage? {
        withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 1024) { buffer -> ProcessUsage? in
            let fd = open(path, O_RDONLY | O_CLOEXEC)
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

    /// The fields after the command (which may hold spaces and parentheses): utime and stime
    /// are the 12th and 13th (in clock ticks), rss the 22nd (in pages).
    package static func parse(_ text: UnsafeBufferPointer<UInt8>) -> ProcessUsage? {
        guard let close = text.lastIndex(of: UInt8(ascii: ")")) else { return nil }
        var field = -1
        var values: (UInt64, UInt64, UInt64) = (0, 0, 0)
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
            guard field == 11 || field == 12 || field == 21 else { continue }
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            let digit = UInt64(byte - UInt8(ascii: "0"))
            switch field {
            case 11: values.0 = values.0 &* 10 &+ digit
            case 12: values.1 = values.1 &* 10 &+ digit
            default: values.2 = values.2 &* 10 &+ digit
            }
        }
        guard field >= 21 else { return nil }
        let (bytes, overflow) = Int(clamping: values.2).multipliedReportingOverflow(by: pageSize)
        return ProcessUsage(cpuSeconds: Double(values.0 &+ values.1) / ticksPerSecond, rssBytes: overflow ? .max : bytes)
    }
}
