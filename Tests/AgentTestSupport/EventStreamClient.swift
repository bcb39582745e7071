import Foundation

/// A client of a server-sent events stream over ``RawHTTP``: the reply's head, then the
/// events one by one as they arrive.
package final class EventStreamClient {
    /// One event: its `id:`, `event:` and `data:` lines.
    package struct Event {
        package var id: Int?
        package var name: String?
        package var data: String
        package var json: [String: Any]? { try? JSONSerialization.jsonObject(with: Data(data.utf8)) as? [String: Any] }
    }

    package let connection: RawHTTP
    package let status: Int
    package let headers: [String: String]
    /// The body before the head was complete and not yet dechunked, then the events' text.
    private var raw = Data()
    private var text = ""
    private var chunked = false
    /// The end of the stream was reached.
    package private(set) var ended = false

    /// Opens `path` (with `headers`; a POST when there is a `body`) and reads the reply's head.
    package init(port: Int, path: String, headers: [String: String] = [:], body: String? = nil, timeout: Double = 30) throws {
        connection = try RawHTTP(port: port, timeout: timeout)
        var request = "\(body == nil ? "GET" : "POST") \(path) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nAccept: text/event-stream\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if let body { request += "Content-Length: \(body.utf8.count)\r\n" }
        try connection.send(request + "\r\n" + (body ?? ""))
        while true {
            let piece = try connection.receive()
            guard !piece.isEmpty else { throw RawHTTP.Failure(description: "closed before the head: \(String(decoding: raw, as: UTF8.self))") }
            raw += piece
            if let split = raw.range(of: Data("\r\n\r\n".utf8)) {
                (status, self.headers) = try RawHTTP.head(String(decoding: raw[..<split.lowerBound], as: UTF8.self))
                raw = Data(raw[split.upperBound...])
                chunked = self.headers["transfer-encoding"]?.lowercased() == "chunked"
                break
            }
        }
        dechunk()
    }

    /// The whole body of a reply that is not a stream (an error).
    package func remainingBody() throws -> String {
        let length = headers["content-length"].flatMap { Int($0) }
        while !ended, length.map({ text.utf8.count < $0 }) ?? true { try fill() }
        return text
    }

    /// The next event, or nil at the end of the stream. Comments (`: …`) and `retry:` are skipped.
    package func next() throws -> Event? {
        while true {
            if let range = text.range(of: "\n\n") {
                let block = text[..<range.lowerBound]
                text = String(text[range.upperBound...])
                var event = Event(data: "")
                var hasData = false
                for line in block.split(separator: "\n") {
                    if line.hasPrefix("id: ") { event.id = Int(line.dropFirst(4)) }
                    else if line.hasPrefix("event: ") { event.name = String(line.dropFirst(7)) }
                    else if line.hasPrefix("data: ") { event.data += (hasData ? "\n" : "") + line.dropFirst(6); hasData = true }
                }
                if hasData { return event }
                continue
            }
            if ended { return nil }
            try fill()
        }
    }

    private func fill() throws {
        let piece = try connection.receive()
        if piece.isEmpty { ended = true } else { raw += piece }
        dechunk()
    }

    /// Moves complete chunks (or everything, when not chunked) from `raw` to `text`.
    private func dechunk() {
        guard chunked else {
            text += String(decoding: raw, as: UTF8.self)
            raw = Data()
            return
        }
        while let lineEnd = raw.range(of: Data("\r\n".utf8)),
              let size = Int(String(decoding: raw[..<lineEnd.lowerBound], as: UTF8.self), radix: 16) {
            if size == 0 { ended = true; raw = Data(); return }
            let start = lineEnd.upperBound
            guard raw.count - (start - raw.startIndex) >= size + 2 else { return }
            let body = raw[start..<(start + size)]
            text += String(decoding: body, as: UTF8.self)
            raw = Data(raw[(start + size + 2)...])
        }
    }
}
