import AgentCore
import Foundation

/// A minimal HTTP/1.1 client for `http://` webhooks: one connection per POST
/// (`Connection: close`), non-blocking sockets polled in short slices so that `stop` can cut
/// a slow attempt short, and only the status line of the answer is read.
///
/// Chosen over URLSession for plain HTTP because URLSession on Linux (FoundationNetworking
/// over libcurl) was measured to keep about 150 bytes per request that are never freed,
/// which grows without bound in an agent that posts every second for months.
package final class SocketHTTPTransport: WebhookTransport {
    private let host: String
    private let port: String
    /// The request line and headers, up to (not including) `Content-Length`.
    private let head: String

    package init(url: URL, headers: [OutputConfiguration.Webhook.Header]) {
        let components = URLComponents(url: url, resolvingAgainstBaseURL: false)
        var hostName = url.host ?? ""
        if hostName.hasPrefix("["), hostName.hasSuffix("]") { hostName = String(hostName.dropFirst().dropLast()) }
        host = hostName
        port = String(url.port ?? 80)
        var target = components?.percentEncodedPath ?? "/"
        if target.isEmpty { target = "/" }
        if let query = components?.percentEncodedQuery { target += "?" + query }
        let hostField = (hostName.contains(":") ? "[\(hostName)]" : hostName) + (url.port.map { ":\($0)" } ?? "")

        var fields: [(String, String)] = [
            ("Host", hostField), ("User-Agent", "AgentRuntime"), ("Accept", "*/*"),
            ("Content-Type", "application/json"),
        ]
        for header in headers {
            // A configured header replaces a default of the same name.
            fields.removeAll { $0.0.lowercased() == header.name.lowercased() }
            fields.append((header.name, header.value))
        }
        fields.append(("Connection", "close"))
        head = "POST \(target) HTTP/1.1\r\n" + fields.map { "\($0.0): \($0.1)\r\n" }.joined()
    }

    package func post(_ body: [UInt8], timeout: Double, channel: OutputChannel) -> WebhookAttempt {
        let deadline = OutputChannel.now() + timeout
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var addresses: UnsafeMutablePointer<addrinfo>?
        let resolved = getaddrinfo(host, port, &hints, &addresses)
        guard resolved == 0, let first = addresses else {
            return .failed("cannot resolve \(host): \(String(cString: gai_strerror(resolved)))")
        }
        defer { freeaddrinfo(first) }

        var problem = "no address for \(host)"
        var cursor: UnsafeMutablePointer<addrinfo>? = first
        while let info = cursor?.pointee {
            cursor = info.ai_next
            let fd = socket(info.ai_family, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue | SOCK_NONBLOCK.rawValue), 0)
            guard fd >= 0 else {
                problem = "socket: \(Self.errorText(errno))"
                continue
            }
            defer { Glibc.close(fd) }
            if connect(fd, info.ai_addr, info.ai_addrlen) != 0, errno != EINPROGRESS {
                problem = "cannot connect to \(host):\(port): \(Self.errorText(errno))"
                continue
            }
            switch Self.wait(fd, for: POLLOUT, deadline: deadline, channel: channel) {
            case .interrupted: return .interrupted
            case .timedOut: return .failed("timed out after \(Self.seconds(timeout)) s connecting to \(host):\(port)")
            case .ready: break
            }
            var status: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &status, &length)
            if status != 0 {
                problem = "cannot connect to \(host):\(port): \(Self.errorText(status))"
                continue
            }
            return exchange(fd, body: body, timeout: timeout, deadline: deadline, channel: channel)
        }
        return .failed(problem)
    }

    package func close() {}

    /// Sends the request on a connected socket and reads the final status line.
    private func exchange(_ fd: Int32, body: [UInt8], timeout: Double, deadline: Double, channel: OutputChannel) -> WebhookAttempt {
        let request = Array((head + "Content-Length: \(body.count)\r\n\r\n").utf8) + body
        var offset = 0
        while offset < request.count {
            let n = request.withUnsafeBytes { send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n >= 0 {
                offset += n
                continue
            }
            if errno == EINTR { continue }
            guard errno == EAGAIN else { return .failed("sending to \(host):\(port) failed: \(Self.errorText(errno))") }
            switch Self.wait(fd, for: POLLOUT, deadline: deadline, channel: channel) {
            case .interrupted: return .interrupted
            case .timedOut: return .failed("timed out after \(Self.seconds(timeout)) s sending to \(host):\(port)")
            case .ready: continue
            }
        }

        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            switch HTTPStatusLine.parse(received) {
            case .status(let code): return .status(code)
            case .malformed(let line): return .failed("malformed response from \(host):\(port): \"\(line)\"")
            case .incomplete: break
            }
            guard received.count < 64 << 10 else { return .failed("response headers from \(host):\(port) exceed 64 KiB") }
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 {
                received += chunk[0..<n]
                continue
            }
            if n == 0 {
                return .failed("\(host):\(port) closed the connection before answering")
            }
            if errno == EINTR { continue }
            guard errno == EAGAIN else { return .failed("receiving from \(host):\(port) failed: \(Self.errorText(errno))") }
            switch Self.wait(fd, for: POLLIN, deadline: deadline, channel: channel) {
            case .interrupted: return .interrupted
            case .timedOut: return .failed("timed out after \(Self.seconds(timeout)) s waiting for \(host):\(port) to answer")
            case .ready: continue
            }
        }
    }

    private enum Readiness {
        case ready, timedOut, interrupted
    }

    /// Polls in slices of at most 100 ms, so that a stop request is noticed promptly.
    private static func wait(_ fd: Int32, for events: Int32, deadline: Double, channel: OutputChannel) -> Readiness {
        while true {
            let limit = channel.effectiveDeadline(deadline)
            let remaining = limit - OutputChannel.now()
            if remaining <= 0 { return limit < deadline ? .interrupted : .timedOut }
            var waiter = pollfd(fd: fd, events: Int16(events), revents: 0)
            let rc = poll(&waiter, 1, Saturating.pollTimeout(min(remaining, 0.1)) + 1)
            // Errors and hang-ups count as ready: the next send or recv reports them.
            if rc > 0 || (rc < 0 && errno != EINTR) { return .ready }
        }
    }

    /// `5`, `0.25`, `1e+300`: a timeout for a message.
    package static func seconds(_ value: Double) -> String {
        value.isFinite && value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.3g", value)
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
