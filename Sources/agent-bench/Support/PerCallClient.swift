import AgentBase
import Foundation

/// A load of requests each on a new connection: `connections` threads, each in a loop of
/// connect, one request with `Connection: close`, read until the server closes. wrk cannot do
/// this: it reuses a connection unless the answer says `Connection: close`, and supervisord's
/// medusa closes without saying so (wrk then counts a read error per request and sends the
/// request again on a new connection).
enum PerCallClient {
    struct Outcome {
        var requests: Int
        var seconds: Double
        /// Latencies in microseconds, from connect to the server's close.
        var latencies: Samples
        /// Answers whose status was not 2xx.
        var non2xx: Int
        /// Connects, sends or reads that failed (or a server that did not close within 5 s).
        var errors: Int
        var firstError: String?

        var requestsPerSecond: Double { Double(requests) / seconds }
    }

    /// What one thread counted.
    private struct Tally: Sendable {
        var latencies: [Double] = []
        var non2xx = 0
        var errors = 0
        var firstError: String?
    }

    static func run(port: Int, method: String, path: String, headers: [String: String] = [:], body: String = "",
                    connections: Int, seconds: Double) -> Outcome {
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers.sorted(by: { $0.key < $1.key }) { head += "\(name): \(value)\r\n" }
        if method == "POST" { head += "Content-Length: \(body.utf8.count)\r\n" }
        let request = Array((head + "\r\n" + body).utf8)
        let results = LockedValue<[Tally]>([])
        let done = DispatchSemaphore(value: 0)
        let start = Clock.now()
        let deadline = start + seconds
        for _ in 0..<connections {
            Thread.detachNewThread {
                var tally = Tally()
                var buffer = [UInt8](repeating: 0, count: 64 << 10)
                while Clock.now() < deadline {
                    let begin = Clock.now()
                    switch once(port: port, request: request, buffer: &buffer) {
                    case .success(let status):
                        tally.latencies.append((Clock.now() - begin) * 1e6)
                        if !(200..<300).contains(status) { tally.non2xx += 1 }
                    case .failure(let error):
                        tally.errors += 1
                        if tally.firstError == nil { tally.firstError = error.description }
                    }
                }
                results.withLock { $0.append(tally) }
                done.signal()
            }
        }
        for _ in 0..<connections { done.wait() }
        let elapsed = Clock.now() - start
        let all = results.withLock { $0 }
        let latencies = Samples(all.flatMap(\.latencies))
        return Outcome(requests: latencies.count, seconds: elapsed, latencies: latencies, non2xx: all.reduce(0) { $0 + $1.non2xx },
                       errors: all.reduce(0) { $0 + $1.errors }, firstError: all.compactMap(\.firstError).first)
    }

    /// One request on a new connection; the answer's status once the server has closed.
    private static func once(port: Int, request: [UInt8], buffer: inout [UInt8]) -> Result<Int, BenchError> {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(BenchError("socket: \(String(cString: strerror(errno)))")) }
        defer { close(fd) }
        var wait = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &wait, socklen_t(MemoryLayout<timeval>.size))
        var one: Int32 = 1
        setsockopt(fd, Int32(IPPROTO_TCP), TCP_NODELAY, &one, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { return .failure(BenchError("connect: \(String(cString: strerror(errno)))")) }
        var sent = 0
        while sent < request.count {
            let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EINTR { continue }
            guard n > 0 else { return .failure(BenchError("send: \(String(cString: strerror(errno)))")) }
            sent += n
        }
        // The status line is in the first 12 bytes; the rest is read and dropped until the close.
        var head: [UInt8] = []
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            if n < 0 { return .failure(BenchError(errno == EAGAIN ? "the server did not close within 5 s" : "recv: \(String(cString: strerror(errno)))")) }
            if n == 0 { break }
            if head.count < 12 { head += buffer[0..<min(n, 12 - head.count)] }
        }
        guard head.count == 12, head.starts(with: Array("HTTP/1.".utf8)), let status = Int(String(decoding: head[9..<12], as: UTF8.self)) else {
            return .failure(BenchError("no HTTP status line in the answer"))
        }
        return .success(status)
    }
}
