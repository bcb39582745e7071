import Foundation

/// A tiny HTTP/1.1 server on 127.0.0.1 (ephemeral port) for webhook tests. It serves one
/// connection at a time on its own thread, records every request, answers
/// `Connection: close`, and can be told to answer 503 to the next N requests, or to start
/// down: the port is bound but not listening, so connections are refused until `goUp()`.
package final class WebhookTestServer: @unchecked Sendable {
    package struct Request: Sendable {
        package var method: String
        package var target: String
        /// Header names lowercased.
        package var headers: [String: String]
        package var body: [UInt8]
        /// The status the server answered.
        package var status: Int
    }

    package let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var recorded: [Request] = []
    private var failuresLeft: Int
    private var hangsLeft: Int
    private let keepsRequests: Bool
    private var answered = 0
    /// Connections of requests left unanswered, closed by `stop`.
    private var held: [Int32] = []
    /// The body of every 200 answer (JSON), for tests of services that answer something.
    private var body = ""

    package func answer(with json: String) {
        lock.lock()
        body = json
        lock.unlock()
    }
    private var listening = false
    private var running = true
    /// Set by the first `stop()`: a second one must not close the fds again (their numbers may
    /// belong to another test's pipe by then).
    private var stopped = false
    private let finished = DispatchSemaphore(value: 0)

    /// Binds 127.0.0.1 on an ephemeral port; listens at once unless `down`. The first
    /// `hangFirst` requests are read but never answered (recorded with status 0), then the
    /// next `failFirst` are answered 503. Without `keepsRequests`, requests are only counted
    /// (for memory measurements).
    package init(failFirst: Int = 0, hangFirst: Int = 0, down: Bool = false, keepsRequests: Bool = true) throws {
        self.keepsRequests = keepsRequests
        failuresLeft = failFirst
        hangsLeft = hangFirst
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure(description: "bind: \(String(cString: strerror(errno)))")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        if !down { goUp() }
    }

    package struct Failure: Error, CustomStringConvertible {
        package let description: String
    }

    package var url: String { "http://127.0.0.1:\(port)/hook" }

    /// Every request received so far, in order.
    package var requests: [Request] {
        lock.withLock { recorded }
    }

    /// How many requests were answered 200.
    package var successCount: Int {
        lock.withLock { answered }
    }

    /// Answers 503 to the next `count` requests.
    package func failNext(_ count: Int) {
        lock.withLock { failuresLeft = count }
    }

    /// Starts listening (and serving), if not yet.
    package func goUp() {
        let start = lock.withLock {
            if listening { return false }
            listening = true
            return true
        }
        guard start else { return }
        listen(listener, 16)
        let thread = Thread { [self] in serve() }
        thread.start()
    }

    /// Stops serving and closes the port. Idempotent.
    package func stop() {
        let (wasListening, first) = lock.withLock {
            running = false
            defer { stopped = true }
            return (listening, !stopped)
        }
        guard first else { return }
        if wasListening { _ = finished.wait(timeout: .now() + 10) }
        close(listener)
        lock.withLock { held }.forEach { close($0) }
    }

    private func serve() {
        defer { finished.signal() }
        while lock.withLock({ running }) {
            var waiter = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiter, 1, 50) > 0 else { continue }
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { continue }
            if handle(connection) { close(connection) }
        }
    }

    /// Serves one request; returns `false` when the connection is held open unanswered.
    private func handle(_ fd: Int32) -> Bool {
        // Bounded reads: a client that stalls cannot hang the test.
        var limit = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        func readMore() -> Bool {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n > 0 { data += chunk[0..<n] }
            return n > 0
        }
        var headerEnd: Int?
        while headerEnd == nil {
            guard readMore() else { return true }
            headerEnd = Self.find([13, 10, 13, 10], in: data)
        }
        let head = String(decoding: data[0..<headerEnd!], as: UTF8.self).components(separatedBy: "\r\n")
        let requestLine = head[0].split(separator: " ")
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        if headers["expect"]?.lowercased() == "100-continue" { Self.send("HTTP/1.1 100 Continue\r\n\r\n", to: fd) }
        let length = Int(headers["content-length"] ?? "0") ?? 0
        let bodyStart = headerEnd! + 4
        while data.count < bodyStart + length {
            guard readMore() else { return true }
        }
        let status = lock.withLock {
            let status: Int
            if hangsLeft > 0 {
                hangsLeft -= 1
                held.append(fd)
                status = 0
            } else if failuresLeft > 0 {
                failuresLeft -= 1
                status = 503
            } else {
                status = 200
                answered += 1
            }
            guard keepsRequests else { return status }
            recorded.append(Request(
                method: requestLine.first.map(String.init) ?? "", target: requestLine.count > 1 ? String(requestLine[1]) : "",
                headers: headers, body: Array(data[bodyStart..<bodyStart + length]), status: status
            ))
            return status
        }
        guard status != 0 else { return false }
        let reason = status == 200 ? "OK" : "Service Unavailable"
        lock.lock()
        let payload = status == 200 ? body : ""
        lock.unlock()
        Self.send("HTTP/1.1 \(status) \(reason)\r\nContent-Type: application/json\r\nContent-Length: \(payload.utf8.count)\r\nConnection: close\r\n\r\n\(payload)", to: fd)
        return true
    }

    /// Writes all of `text` (the test servers' answers).
    static func send(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + offset, $0.count - offset, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { return }
            offset += n
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index..<index + needle.count].elementsEqual(needle) {
            return index
        }
        return nil
    }
}
