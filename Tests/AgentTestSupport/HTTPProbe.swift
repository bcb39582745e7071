import Foundation

/// A plain HTTP/1.1 client over a TCP socket for tests of the HTTP front: one request per
/// connection (`Connection: close`), the whole answer read to the end.
package enum HTTPProbe {
    package struct Answer {
        package var status: Int
        /// Header names in lower case.
        package var headers: [String: String]
        package var body: String

        package var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body.utf8))) as? [String: Any] ?? [:] }
    }

    package struct Failure: Error, CustomStringConvertible {
        package var description: String

        package init(description: String) { self.description = description }
    }

    package static func request(_ method: String, _ path: String, port: Int, token: String? = nil, body: String? = nil, headers: [String: String] = [:],
                        timeout: Double = 30) throws -> Answer {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var text = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let token { text += "Authorization: Bearer \(token)\r\n" }
        for (name, value) in headers { text += "\(name): \(value)\r\n" }
        if let body {
            text += "Content-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\n\r\n\(body)"
        } else {
            text += "\r\n"
        }
        let bytes = Array(text.utf8)
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send: \(String(cString: strerror(errno)))") }
            sent += n
        }
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n < 0, errno == EINTR { continue }
            guard n >= 0 else { throw Failure(description: "recv: \(String(cString: strerror(errno))) after \(received.count) bytes") }
            if n == 0 { break }
            received += chunk[0..<n]
        }
        let answer = try parse(received)
        HTTPAnswerCheck.check(method: method, target: path, status: answer.status, contentType: answer.headers["content-type"], body: answer.body)
        return answer
    }

    package static func get(_ path: String, port: Int, token: String? = nil) throws -> Answer { try request("GET", path, port: port, token: token) }

    package static func parse(_ bytes: [UInt8]) throws -> Answer {
        let separator: [UInt8] = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, bytes.count - 4)).first(where: { Array(bytes[$0..<min($0 + 4, bytes.count)]) == separator }) else {
            throw Failure(description: "no end of headers in \(bytes.count) bytes: \(String(decoding: bytes, as: UTF8.self))")
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = head[0].split(separator: " ")
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(head[0])") }
        var headers: [String: String] = [:]
        for line in head.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(bytes[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" {
            var decoded: [UInt8] = []
            var index = 0
            while let lineEnd = (index..<max(index, body.count - 1)).first(where: { body[$0] == 13 && body[$0 + 1] == 10 }),
                  let size = Int(String(decoding: body[index..<lineEnd], as: UTF8.self), radix: 16), size > 0 {
                decoded += body[(lineEnd + 2)..<min(body.count, lineEnd + 2 + size)]
                index = lineEnd + 2 + size + 2
            }
            body = decoded
        }
        return Answer(status: status, headers: headers, body: String(decoding: body, as: UTF8.self))
    }
}
