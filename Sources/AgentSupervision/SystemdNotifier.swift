import Foundation

/// Talks to systemd's service manager as sd_notify(3) does: newline-separated `KEY=value`
/// lines in one datagram to the AF_UNIX socket named by `$NOTIFY_SOCKET` (a path, or an
/// abstract name written with a leading `@`), so that a `Type=notify` unit learns when the
/// agent is ready, reloading or stopping, what it is doing, and that its loop is alive.
///
/// No package in reach does it and libsystemd is not linked: the protocol is one `sendto`.
public final class SystemdNotifier {
    /// The environment variables systemd sets for the notify protocol; workers never get them
    /// (they must not speak for the agent).
    public static let environmentKeys = ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"]

    /// `$NOTIFY_SOCKET` as given.
    public let socketName: String
    /// How often to send `WATCHDOG=1` (half of `$WATCHDOG_USEC`), nil when systemd watches
    /// another process (`$WATCHDOG_PID`) or runs no watchdog.
    public let watchdogInterval: Double?
    private let fd: Int32
    private let address: sockaddr_un
    private let addressLength: socklen_t
    /// The last `STATUS=` sent: the same status is not sent twice.
    private var lastStatus: String?
    /// Why the last datagram could not be sent (nil: it was); logged once per new reason.
    package private(set) var lastFailure: String?

    /// The notifier the environment asks for, or nil when `$NOTIFY_SOCKET` is not set (not run
    /// by systemd as `Type=notify`). Throws when it is set but unusable.
    public static func fromEnvironment(_ environment: [String: String], pid: Int32 = getpid()) throws(Failure) -> SystemdNotifier? {
        guard let name = environment["NOTIFY_SOCKET"], !name.isEmpty else { return nil }
        var interval: Double?
        if let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 {
            // WATCHDOG_PID: the watchdog is for that process only (a wrapper may run us).
            let watched = environment["WATCHDOG_PID"].flatMap { Int32($0) }
            if watched == nil || watched == pid { interval = Double(usec) / 2_000_000 }
        }
        return try SystemdNotifier(socketName: name, watchdogInterval: interval)
    }

    /// A notifier sending to `socketName` (a path, or `@name` for an abstract socket).
    public init(socketName: String, watchdogInterval: Double? = nil) throws(Failure) {
        self.socketName = socketName
        self.watchdogInterval = watchdogInterval
        var bytes = Array(socketName.utf8)
        let isAbstract = bytes.first == UInt8(ascii: "@")
        guard bytes.first == UInt8(ascii: "/") || isAbstract else {
            throw Failure(code: "notify_socket", message: "NOTIFY_SOCKET=\(socketName): expected an absolute path or an abstract name starting with @ (vsock: is not supported); systemd sets it for Type=notify units")
        }
        if isAbstract { bytes[0] = 0 }
        let capacity = MemoryLayout.size(ofValue: sockaddr_un().sun_path)
        guard bytes.count <= capacity else {
            throw Failure(code: "notify_socket", message: "NOTIFY_SOCKET=\(socketName): longer than the \(capacity) bytes of a socket address")
        }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        self.address = address
        // An abstract name is exactly its bytes; a path ends at its NUL.
        addressLength = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count + (isAbstract ? 0 : 1))
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else {
            throw Failure(code: "notify_socket", message: "NOTIFY_SOCKET=\(socketName): cannot make a datagram socket: \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// Sends `lines` (`READY=1`, `STATUS=…`) in one datagram. Never blocks (the supervisor's
    /// loop sends): a full socket drops the message. Returns whether it was sent.
    @discardableResult
    public func send(_ lines: [String]) -> Bool {
        var text = lines.joined(separator: "\n")
        text.append("\n")
        let sent = text.utf8CString.withUnsafeBytes { raw in
            withUnsafePointer(to: address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                    sendto(fd, raw.baseAddress, raw.count - 1, Int32(MSG_DONTWAIT) | Int32(MSG_NOSIGNAL), socketAddress, addressLength)
                }
            }
        }
        if sent < 0 {
            lastFailure = "cannot notify systemd on \(socketName): \(String(cString: strerror(errno)))"
            return false
        }
        lastFailure = nil
        return true
    }

    /// `STATUS=text` with `extra` lines, unless that status was the last one sent and there is
    /// nothing else to say.
    @discardableResult
    package func send(status: String?, _ extra: [String] = []) -> Bool {
        var lines = extra
        if let status = status.map(Self.oneLine), status != lastStatus { lines.append("STATUS=" + status) }
        guard !lines.isEmpty else { return true }
        let sent = send(lines)
        if sent, let status { lastStatus = Self.oneLine(status) }
        return sent
    }

    /// `MONOTONIC_USEC=…` for `RELOADING=1`: CLOCK_MONOTONIC now, in microseconds.
    package static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1000
    }

    /// A status is one line (systemctl shows it as one).
    package static func oneLine(_ text: String) -> String {
        String(text.map { $0 == "\n" ? " " : $0 }.prefix(400))
    }

    /// Why `$NOTIFY_SOCKET` cannot be used.
    public struct Failure: Error, CustomStringConvertible {
        public var code: String
        public var message: String
        public var description: String { message }
    }
}
