import Foundation

/// One HTTP/1.1 request to a loopback server over a plain socket, synchronously (tests run on
/// threads of their own; URLSession is avoided: its Linux port can hang a waiting thread).
package enum HTTPExchange {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    /// Sends `method path` to `127.0.0.1:port` with `body` (JSON) and `headers`; returns the
    /// status, the headers (names lowercased) and the body.
    package static func send(_ method: String, port: Int, path: String, body: Data? = nil, headers: [String: String] = [:],
                     timeout: Double = 60) throws -> (status: Int, headers: [String: String], body: Data) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw Failure(description: "connect to 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body {
            if headers["Content-Type"] == nil { head += "Content-Type: application/json\r\n" }
            head += "Content-Length: \(body.count)\r\n"
        } else if method != "GET" && method != "DELETE" {
            head += "Content-Length: 0\r\n"
        }
        let request = Array((head + "\r\n").utf8) + Array(body ?? Data())
        var sent = 0
        while sent < request.count {
            let count = request[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            if count < 0, errno == EINTR { continue }
            guard count > 0 else { throw Failure(description: "write to 127.0.0.1:\(port) failed") }
            sent += count
        }
        var answer: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = read(fd, &buffer, buffer.count)
            // A signal to this thread (the test process starts and reaps many children): read
            // again. Four browser tests at once failed on it in a full run at load 50.
            if count < 0, errno == EINTR { continue }
            if count < 0 { throw Failure(description: "read from 127.0.0.1:\(port): \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            answer += buffer[0..<count]
            // Some servers keep the connection open despite `Connection: close`: stop once the
            // body of the length announced is in.
            if let complete = try? parse(answer), let length = complete.headers["content-length"].flatMap({ Int($0) }),
               complete.body.count >= length { break }
        }
        return try parse(answer)
    }

    package static func parse(_ answer: [UInt8]) throws -> (status: Int, headers: [String: String], body: Data) {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard answer.count >= 4, let end = (0...(answer.count - 4)).first(where: { Array(answer[$0..<$0 + 4]) == separator }) else {
            throw Failure(description: "no HTTP answer: \(String(decoding: answer.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: answer[0..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let status = lines.first.flatMap { $0.split(separator: " ").dropFirst().first }.flatMap { Int($0) } ?? 0
        var headers: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        var body = Array(answer[(end + 4)...])
        if headers["transfer-encoding"]?.lowercased() == "chunked" { body = dechunked(body) }
        return (status, headers, Data(body))
    }

    package static func dechunked(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var index = 0
        while index + 1 < bytes.count {
            guard let lineEnd = (index..<bytes.count - 1).first(where: { bytes[$0] == 13 && bytes[$0 + 1] == 10 }),
                  let size = Int(String(decoding: bytes[index..<lineEnd], as: UTF8.self).split(separator: ";").first ?? "", radix: 16), size > 0 else { break }
            let start = lineEnd + 2
            out += bytes[start..<min(start + size, bytes.count)]
            index = start + size + 2
        }
        return out
    }
}
