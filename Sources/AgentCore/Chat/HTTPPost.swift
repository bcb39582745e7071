import Foundation

/// One blocking HTTP/1.1 POST of JSON over a plain socket, for the chatbot's `rest` adapter.
/// Deliberately not URLSession: FoundationNetworking would make every worker load libcurl and
/// its TLS libraries (about 9 ms more CPU at start and 1.5 MB more PSS per worker). `https`
/// services are refused with a clear message.
enum HTTPPost {
    struct Failure: Error, CustomStringConvertible { var description: String }

    static func send(url: URL, body: [UInt8], timeout: Double) -> Result<(Int, [UInt8]), Failure> {
        guard url.scheme == "http", let host = url.host else {
            return .failure(Failure(description: "only http:// services are supported by the rest adapter, not \(url.scheme ?? "this URL")"))
        }
        let port = url.port ?? 80
        let deadline = Date().timeIntervalSince1970 + timeout
        var hints = addrinfo()
        hints.ai_socktype = Int32(SOCK_STREAM.rawValue)
        var list: UnsafeMutablePointer<addrinfo>?
        guard getaddrinfo(host, String(port), &hints, &list) == 0, let first = list else {
            return .failure(Failure(description: "cannot resolve \(host)"))
        }
        defer { freeaddrinfo(list) }
        let fd = socket(first.pointee.ai_family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return .failure(Failure(description: String(cString: strerror(errno)))) }
        defer { close(fd) }
        _ = fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK)
        if connect(fd, first.pointee.ai_addr, first.pointee.ai_addrlen) != 0, errno != EINPROGRESS {
            return .failure(Failure(description: String(cString: strerror(errno))))
        }
        guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return .failure(Failure(description: "timed out connecting after \(timeout) s")) }
        var error: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length)
        guard error == 0 else { return .failure(Failure(description: String(cString: strerror(error)))) }

        let path = url.path.isEmpty ? "/" : url.path + (url.query.map { "?" + $0 } ?? "")
        let head = "POST \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            guard wait(fd, for: Int16(POLLOUT), until: deadline) else { return .failure(Failure(description: "timed out sending after \(timeout) s")) }
            let n = request.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, $0.count - sent, Int32(MSG_NOSIGNAL)) }
            if n < 0, errno == EAGAIN || errno == EINTR { continue }
            guard n > 0 else { return .failure(Failure(description: String(cString: strerror(errno)))) }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        while true {
            guard wait(fd, for: Int16(POLLIN), until: deadline) else { return .failure(Failure(description: "timed out waiting for the answer after \(timeout) s")) }
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n < 0, errno == EAGAIN || errno == EINTR { continue }
            if n < 0 { return .failure(Failure(description: String(cString: strerror(errno)))) }
            if n == 0 { break }
            response += chunk[0..<n]
            if response.count > 1 << 20 { return .failure(Failure(description: "the answer is larger than 1 MiB")) }
            if let parsed = parse(response), parsed.complete { return .success((parsed.status, parsed.body)) }
        }
        guard let parsed = parse(response) else { return .failure(Failure(description: "the answer is not HTTP")) }
        return .success((parsed.status, parsed.body))
    }

    /// Status and body of a response read so far; `complete` once Content-Length bytes arrived.
    static func parse(_ bytes: [UInt8]) -> (status: Int, body: [UInt8], complete: Bool)? {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = (0...(max(0, bytes.count - 4))).first(where: { bytes.count >= $0 + 4 && Array(bytes[$0..<$0 + 4]) == separator }) else { return nil }
        let head = String(decoding: bytes[..<end], as: UTF8.self)
        let lines = head.components(separatedBy: "\r\n")
        guard let statusLine = lines.first, statusLine.hasPrefix("HTTP/"), let status = Int(statusLine.split(separator: " ").dropFirst().first ?? "") else { return nil }
        let body = Array(bytes[(end + 4)...])
        let declared = lines.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            return parts.count == 2 && parts[0].lowercased() == "content-length" ? Int(parts[1].trimmingCharacters(in: .whitespaces)) : nil
        }.first
        return (status, declared.map { Array(body.prefix($0)) } ?? body, declared.map { body.count >= $0 } ?? false)
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
