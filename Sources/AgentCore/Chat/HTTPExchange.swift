import Foundation

/// One blocking HTTP/1.1 request over a plain socket, for the chatbot's adapters (`rest`,
/// `llm`), run on the chatbot worker's own thread: never on the supervisor. Reads a body sent
/// with Content-Length, chunked, or until the server closes; hands the decoded body to `onBody`
/// as it comes (a server-sent event stream) when asked.
///
/// Deliberately not URLSession: FoundationNetworking would make every worker load libcurl and
/// its TLS libraries (about 9 ms more CPU at start and 1.5 MB more PSS per worker). `https`
/// services are refused with a clear message.
struct HTTPExchange {
    struct Failure: Error, CustomStringConvertible {
        var description: String
        /// The deadline passed (connecting, sending or waiting for the answer).
        var timedOut = false
        /// The server was reached and answered, but not with an answer to take (too large,
        /// cut short, not HTTP): not "unreachable".
        var badAnswer = false
    }

    var url: URL
    var headers: [(String, String)] = []
    var body: [UInt8]
    var timeout: Double
    /// The most bytes of answer taken (head and body).
    var maximumBytes = 8 << 20
    /// What uses it, for messages ("the rest adapter").
    var user = "the rest adapter"

    /// Sends the request and reads the answer; `onBody` (if given) gets each piece of the
    /// decoded body as it arrives, and the answer's body is then empty.
    func send(onBody: (([UInt8]) -> Void)? = nil) -> Result<(status: Int, body: [UInt8]), Failure> {
        guard url.scheme == "http", let host = url.host else {
            return .failure(Failure(description: "only http:// services are supported by \(user), not \(url.scheme ?? "this URL")"))
        }
        let port = url.port ?? 80
        let deadline = Date().timeIntervalSince1970 + timeout
        let fd: Int32
        switch Self.connect(host: host, port: port, deadline: deadline, timeout: timeout) {
        case .success(let connected): fd = connected
        case .failure(let failure): return .failure(failure)
        }
        defer { close(fd) }
        let path = url.path.isEmpty ? "/" : url.path + (url.query.map { "?" + $0 } ?? "")
        var head = "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        var sent = 0
        while sent < request.count {
            guard Self.wait(fd, for: Int16(POLLOUT), until: deadline) else { return .failure(Failure(description: "timed out sending after \(timeout) s", timedOut: true)) }
            let n = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EAGAIN || errno == EINTR { continue }
            guard n > 0 else { return .failure(Failure(description: String(cString: strerror(errno)))) }
            sent += n
        }
        return receive(fd, deadline: deadline, onBody: onBody)
    }

    private func receive(_ fd: Int32, deadline: Double, onBody: (([UInt8]) -> Void)?) -> Result<(status: Int, body: [UInt8]), Failure> {
        var reader = HTTPResponseReader(maximumBytes: maximumBytes)
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            guard Self.wait(fd, for: Int16(POLLIN), until: deadline) else {
                return .failure(Failure(description: "timed out waiting for the answer after \(timeout) s", timedOut: true))
            }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EAGAIN || errno == EINTR { continue }
            if n < 0 { return .failure(Failure(description: String(cString: strerror(errno)))) }
            do {
                if try reader.feed(n == 0 ? [] : Array(chunk[0..<n]), ended: n == 0, onBody: onBody) {
                    return .success((reader.status, reader.body))
                }
            } catch {
                return .failure(Failure(description: "\(error)", badAnswer: true))
            }
            if n == 0 { return .failure(Failure(description: "the answer is not HTTP (the connection closed first)", badAnswer: true)) }
        }
    }

    /// A connected non-blocking socket.
    private static func connect(host: String, port: Int, deadline: Double, timeout: Double) -> Result<Int32, Failure> {
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return .failure(Failure(description: "cannot resolve \(host)"))
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(description: String(cString: strerror(errno)))) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        if Glibc.connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0, errno != EINPROGRESS {
            defer { close(fd) }
            return .failure(Failure(description: String(cString: strerror(errno))))
        }
        guard wait(fd, for: Int16(POLLOUT), until: deadline) else {
            close(fd)
            return .failure(Failure(description: "timed out connecting after \(timeout) s", timedOut: true))
        }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else {
            close(fd)
            return .failure(Failure(description: String(cString: strerror(error))))
        }
        return .success(fd)
    }

    private static func wait(_ fd: Int32, for events: Int16, until deadline: Double) -> Bool {
        while true {
            let remaining = deadline - Date().timeIntervalSince1970
            guard remaining > 0 else { return false }
            var poller = pollfd(fd: fd, events: events, revents: 0)
            let ready = poll(&poller, 1, Saturating.pollTimeout(remaining))
            if ready < 0, errno == EINTR { continue }
            return ready > 0
        }
    }
}
