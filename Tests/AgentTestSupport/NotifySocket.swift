import Foundation

/// A datagram socket standing in for systemd's notify socket: bound at a path (or an abstract
/// name), every datagram received kept as its lines, in order.
package final class NotifySocket: @unchecked Sendable {
    /// What to put in `NOTIFY_SOCKET`: the path, or `@name`.
    package let name: String
    private let fd: Int32
    private let lock = NSLock()
    private var received: [[String]] = []
    private var closed = false
    private var paused: Bool

    /// `paused`: nothing is read until ``resume()``, so that the socket's queue fills as
    /// behind a reader that is slow.
    package init(abstract: Bool = false, paused: Bool = false) throws {
        self.paused = paused
        let label = "agent-tests-notify-\(UUID().uuidString.prefix(8))"
        name = abstract ? "@" + label : TestPaths.temporaryDirectory("notify") + "/notify.sock"
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(message: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        var bytes = Array(name.utf8)
        if abstract { bytes[0] = 0 }
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (abstract ? 0 : 1))
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw Failure(message: "bind \(name): \(String(cString: strerror(errno)))") }
        var timeout = timeval(tv_sec: 0, tv_usec: 100_000)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 65536)
            while !lock.withLock({ closed }) {
                if lock.withLock({ self.paused }) {
                    usleep(10_000)
                    continue
                }
                let count = recv(fd, &buffer, buffer.count, 0)
                guard count > 0 else { continue }
                let lines = String(decoding: buffer[0..<count], as: UTF8.self).split(separator: "\n").map(String.init)
                lock.withLock { received.append(lines) }
            }
            close(fd)
        }
    }

    deinit {
        lock.withLock { closed = true }
        if !name.hasPrefix("@") { unlink(name) }
    }

    package func stop() { lock.withLock { closed = true } }

    /// Starts reading a socket made `paused`.
    package func resume() { lock.withLock { paused = false } }

    /// Every datagram so far, each as its lines.
    package var messages: [[String]] { lock.withLock { received } }

    /// Every line so far, in order.
    package var lines: [String] { messages.flatMap { $0 } }

    /// Waits until a datagram satisfies `predicate` at index `from` or later; returns its index.
    package func waitForMessage(from start: Int = 0, timeout: Double = 60, _ predicate: ([String]) -> Bool) -> Int? {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let list = messages
            if start < list.count, let index = list[start...].firstIndex(where: predicate) { return index }
            Thread.sleep(forTimeInterval: 0.02)
        }
        return nil
    }

    package struct Failure: Error, CustomStringConvertible {
        package var message: String
        package var description: String { message }
    }
}
