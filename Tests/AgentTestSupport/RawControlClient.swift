import Foundation

/// A client of an agent's control socket that does by hand what `agent-control` does for
/// you, and what it would never do: stay idle, send too much, never read.
package final class RawControlClient {
    package let fd: Int32

    /// Connects to `path`; nil when the socket refuses (its backlog stays full for 2 s).
    package init?(path: String) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return nil }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            close(fd)
            return nil
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in bytes.enumerated() { raw[i] = byte }
        }
        // Non-blocking: a connection the agent has not accepted yet must not hold the test.
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        // A full backlog refuses with EAGAIN until the agent has taken (or refused) a few.
        let deadline = Date().addingTimeInterval(2)
        var rc: Int32 = -1
        repeat {
            rc = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
            }
            if rc == 0 || errno != EAGAIN { break }
            usleep(2000)
        } while Date() < deadline
        guard rc == 0 else {
            close(fd)
            return nil
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Sends all of `bytes` (waiting up to `timeout` for room); returns how many went out.
    @discardableResult
    package func send(_ bytes: [UInt8], timeout: Double = 10) -> Int {
        var offset = 0
        let deadline = Date().addingTimeInterval(timeout)
        while offset < bytes.count, Date() < deadline {
            let n = bytes.withUnsafeBytes { Foundation.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n > 0 { offset += n; continue }
            if n < 0, errno == EAGAIN || errno == EINTR {
                var poller = pollfd(fd: fd, events: Int16(POLLOUT), revents: 0)
                _ = poll(&poller, 1, 50)
                continue
            }
            break
        }
        return offset
    }

    package func send(_ line: String) { send(Array((line + "\n").utf8)) }

    /// Reads until the first newline, the end of the stream or `timeout`; returns the line
    /// without its newline (nil: nothing complete came).
    package func readLine(timeout: Double = 10) -> String? {
        var received: [UInt8] = []
        readAll(timeout: timeout) { received.append(contentsOf: $0); return received.contains(10) }
        guard let newline = received.firstIndex(of: 10) else { return nil }
        return String(decoding: received[..<newline], as: UTF8.self)
    }

    package enum ReadEnd { case enough, closed, timedOut }

    /// Reads whatever comes, handing it to `take` (true: stop), until the agent closes the
    /// connection or `timeout` passes.
    @discardableResult
    package func readAll(timeout: Double, _ take: ([UInt8]) -> Bool = { _ in false }) -> ReadEnd {
        var chunk = [UInt8](repeating: 0, count: 64 << 10)
        let deadline = Date().addingTimeInterval(timeout)
        while true {
            let remaining = deadline.timeIntervalSinceNow
            guard remaining > 0 else { return .timedOut }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            if poll(&poller, 1, Int32(min(remaining, 1) * 1000)) <= 0 { continue }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EINTR || errno == EAGAIN { continue }
            if n <= 0 { return .closed }
            if take(Array(chunk[0..<n])) { return .enough }
        }
    }

    /// Waits (at most `timeout`) until the agent has closed its end, without reading what it
    /// sent: true when it has.
    package func waitForHangUp(timeout: Double = 60) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: 0, revents: 0)
            if poll(&poller, 1, 100) > 0, poller.revents & Int16(POLLHUP) != 0 { return true }
        }
        return false
    }

    /// Sends one request and reads its answer, as a JSON object.
    package static func request(_ path: String, _ line: String, timeout: Double = 10) -> [String: Any]? {
        guard let client = RawControlClient(path: path) else { return nil }
        client.send(line)
        return client.readLine(timeout: timeout).flatMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}

/// What the tests read of a process from /proc.
package enum DaemonProbe {
    /// CPU seconds (user + system) the process has used.
    package static func cpuSeconds(_ pid: Int32) -> Double {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
              let close = stat.lastIndex(of: ")") else { return 0 }
        // After the command: state is field 3; utime and stime are fields 14 and 15.
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        let ticks = (Double(fields[11]) ?? 0) + (Double(fields[12]) ?? 0)
        return ticks / Double(sysconf(Int32(_SC_CLK_TCK)))
    }

    /// The descriptor limit that leaves the process exactly `free` descriptors: a new
    /// descriptor takes the lowest free number, which must be below the limit, and the
    /// numbers in use may have gaps.
    package static func limitLeaving(_ free: Int, in pid: Int32) -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd")) ?? []
        let open = Set(entries.compactMap { Int($0) })
        var limit = 0
        var available = 0
        while available < free {
            if !open.contains(limit) { available += 1 }
            limit += 1
        }
        return limit
    }

    /// Sets the process's soft and hard limit of open descriptors (util-linux prlimit, as an
    /// operator would; Glibc's prlimit(2) wrapper is not visible to Swift).
    package static func setDescriptorLimit(_ pid: Int32, _ limit: Int) -> Bool {
        (try? runProgram("/usr/bin/prlimit", ["--pid", String(pid), "--nofile=\(limit):\(limit)"]).status) == 0
    }
}
