import Foundation

/// A minimal HTTP/1.1 client on a plain socket, so that tests control every byte: half
/// requests, bodies on a GET, connections left open, streams read piece by piece.
package final class RawHTTP {
    /// An answer: status, headers (names lowercased) and body.
    package struct Reply: CustomStringConvertible {
        package var status: Int
        package var headers: [String: String]
        package var body: String
        package var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any] }
        package var description: String { "\(status) \(headers) \(body)" }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let fd: Int32

    /// Connects to 127.0.0.1:`port` from `source` (another loopback address is another
    /// client: 127.0.0.2, …); reads time out after `timeout` seconds.
    package init(port: Int, from source: String = "127.0.0.1", timeout: Double = 30) throws {
        // The descriptor becomes `fd` only once connected: an init that throws after every
        // stored property is set runs deinit, which closed it a second time — by then perhaps
        // another thread's new descriptor (the event loop's eventfd of an in-process client),
        // which stalled every test using it.
        let socket = Foundation.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1e6))
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        // Bound to `source` first unless it is the default: the kernel picks 127.0.0.1 anyway.
        if source != "127.0.0.1", Self.withAddress(source, 0, { bind(socket, $0, $1) }) != 0 {
            let error = errno
            Foundation.close(socket)
            throw Failure(description: "bind to \(source): errno \(error)")
        }
        guard Self.withAddress("127.0.0.1", port, { connect(socket, $0, $1) }) == 0 else {
            let error = errno
            Foundation.close(socket)
            throw Failure(description: "connect to port \(port): errno \(error)")
        }
        fd = socket
    }

    deinit { Foundation.close(fd) }

    /// `call` (bind, connect) with the IPv4 address `host:port`.
    private static func withAddress(_ host: String, _ port: Int, _ call: (UnsafePointer<sockaddr>, socklen_t) -> Int32) -> Int32 {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr(host)
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { call($0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
    }

    package func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let count = bytes[sent...].withUnsafeBytes { Foundation.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard count > 0 else { throw Failure(description: "send: errno \(errno)") }
            sent += count
        }
    }

    /// Closes the sending side only (a half-closed connection).
    package func shutdownWriting() { shutdown(fd, Int32(SHUT_WR)) }

    /// Some bytes, or empty at the end of the stream; throws when the read timed out.
    package func receive() throws -> Data {
        var buffer = [UInt8](repeating: 0, count: 65536)
        let count = recv(fd, &buffer, buffer.count, 0)
        if count < 0 { throw Failure(description: "recv: errno \(errno) (timed out?)") }
        return Data(buffer[0..<count])
    }

    /// Everything until the server closes the connection.
    package func receiveAll() throws -> Data {
        var data = Data()
        while true {
            let piece = try receive()
            if piece.isEmpty { return data }
            data += piece
        }
    }

    /// One reply on a connection kept alive: its head and its `Content-Length` body.
    package func receiveReply() throws -> Reply {
        var data = Data()
        while true {
            if let reply = try? Self.parse(data), let length = reply.headers["content-length"].flatMap(Int.init),
               reply.body.utf8.count >= length {
                return reply
            }
            let piece = try receive()
            if piece.isEmpty { throw Failure(description: "closed before a whole reply: \(String(decoding: data, as: UTF8.self).debugDescription)") }
            data += piece
        }
    }

    /// What the server sent until it closed the connection, also when it closed with a reset
    /// (a refusal closes before reading what the client sent) or the read timed out.
    package func receiveUntilClosed() -> Data {
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count <= 0 { return data }
            data += buffer[0..<count]
        }
    }

    /// Whether the connection is still open with nothing to read (the server has not closed it).
    package func isOpenAndQuiet() -> Bool {
        var byte: UInt8 = 0
        let count = recv(fd, &byte, 1, Int32(MSG_DONTWAIT | MSG_PEEK))
        return count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)
    }

    /// Whether the server closed the connection (end of stream or reset) before a read timed
    /// out, reading and dropping anything it sent first.
    package func waitForClose() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = recv(fd, &buffer, buffer.count, 0)
            if count == 0 { return true }
            if count < 0 { return errno == ECONNRESET }
        }
    }

    /// `count` connections opened at once without waiting for the server to accept them
    /// (non-blocking connects); once connected within 3 s, each sends `payload(index)` (nil: closes
    /// its sending side). Returns the sockets, for ``closeAll(_:)``.
    package static func flood(port: Int, count: Int, payload: (Int) -> String?) -> [Int32] {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var sockets: [pollfd] = []
        for _ in 0..<count {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { continue }
            _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            sockets.append(pollfd(fd: fd, events: Int16(POLLOUT), revents: 0))
        }
        _ = poll(&sockets, nfds_t(sockets.count), 3000)
        for (index, entry) in sockets.enumerated() where entry.revents & Int16(POLLOUT) != 0 {
            if let text = payload(index) {
                _ = text.withCString { Foundation.send(entry.fd, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
            } else {
                shutdown(entry.fd, Int32(SHUT_WR))
            }
        }
        return sockets.map(\.fd)
    }

    package static func closeAll(_ sockets: [Int32]) {
        for fd in sockets { Foundation.close(fd) }
    }

    /// One request on a connection of its own (`Connection: close`), and its reply.
    package static func request(port: Int, _ method: String, _ path: String, body: String? = nil, headers: [String: String] = [:]) throws -> Reply {
        let client = try RawHTTP(port: port)
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body {
            if headers["Content-Type"] == nil { text += "Content-Type: application/json\r\n" }
            text += "Content-Length: \(body.utf8.count)\r\n\r\n" + body
        } else {
            text += "\r\n"
        }
        try client.send(text)
        let reply = try parse(client.receiveAll())
        HTTPAnswerCheck.check(method: method, target: path, status: reply.status, contentType: reply.headers["content-type"], body: reply.body)
        return reply
    }

    /// A whole reply (`Content-Length` or chunked body).
    package static func parse(_ data: Data) throws -> Reply {
        let text = String(decoding: data, as: UTF8.self)
        guard let split = text.range(of: "\r\n\r\n") else { throw Failure(description: "no complete head in \(text.debugDescription)") }
        let (status, headers) = try head(String(text[..<split.lowerBound]))
        var body = String(text[split.upperBound...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunk(body) }
        return Reply(status: status, headers: headers, body: body)
    }

    package static func head(_ text: String) throws -> (Int, [String: String]) {
        let lines = text.components(separatedBy: "\r\n")
        let parts = lines.first?.split(separator: " ") ?? []
        guard parts.count >= 2, let status = Int(parts[1]) else { throw Failure(description: "no status line in \(text.debugDescription)") }
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let name = line[..<colon].lowercased()
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers[name] = headers[name].map { $0 + ", " + value } ?? value
        }
        return (status, headers)
    }

    package static func dechunk(_ text: String) -> String {
        var rest = Substring(text)
        var body = ""
        while let lineEnd = rest.range(of: "\r\n"), let size = Int(rest[..<lineEnd.lowerBound], radix: 16), size > 0 {
            let start = lineEnd.upperBound
            let bytes = Array(rest[start...].utf8)
            body += String(decoding: bytes.prefix(size), as: UTF8.self)
            rest = Substring(String(decoding: bytes.dropFirst(size + 2), as: UTF8.self))
        }
        return body
    }
}
