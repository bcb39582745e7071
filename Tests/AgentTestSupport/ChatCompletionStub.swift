import Foundation

/// A language-model server for tests, speaking the OpenAI-compatible chat-completions protocol
/// on 127.0.0.1 (ephemeral port): each request gets the next scripted answer (or the last one
/// again) — a plain answer, tool calls, a streamed answer (server-sent events, chunked), an
/// HTTP error, garbage, or an answer after a delay. Every request's JSON body is recorded.
/// Each connection is served on its own thread (a slow answer holds nobody else).
package final class ChatCompletionStub: @unchecked Sendable {
    package enum Answer: Sendable {
        /// `choices[0].message.content`.
        case text(String)
        /// Tool calls: (name, arguments as the model writes them: JSON text, or not).
        case toolCalls([(name: String, arguments: String)])
        /// The text as server-sent events, one delta a piece, chunked.
        case streamed([String])
        /// Tool calls streamed: each call's name, then its arguments in two pieces.
        case streamedToolCall(name: String, arguments: String)
        case status(Int, String)
        /// Bytes that are no chat completion (a 200 with this body).
        case garbage(String)
        /// Answers `then` after `seconds`.
        indirect case slow(Double, then: Answer)
        /// The first pieces streamed, then nothing until ``release()`` (at most 60 s), then the
        /// rest and `[DONE]`: a test sees the first pieces arrive before the rest exists.
        case streamedHeld([String], rest: [String])
        /// The pieces streamed, then half a chunk and the connection closed.
        case streamedCut([String])
        /// The pieces, then a `data:` line that is not JSON (and the stream goes on to its end).
        case streamedGarbage([String])
        /// The same piece every 0.1 s, never `[DONE]`, until the client goes (at most 120 s).
        case streamedForever(String)
    }

    package let port: UInt16
    private let listener: Int32
    private let lock = NSLock()
    private var script: [Answer] = []
    private var recorded: [[String: Any]] = []
    private var running = true
    private var calls = 0
    private let held = DispatchSemaphore(value: 0)
    private var expired = false

    package init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 64) == 0 else { throw WebhookTestServer.Failure(description: "stub: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    /// `http://127.0.0.1:PORT/v1`: what the adapter's `base_url` says.
    package var baseURL: String { "http://127.0.0.1:\(port)/v1" }

    /// The answers to the next requests, in order (the last one repeats).
    package func script(_ answers: Answer...) { lock.withLock { script = answers } }

    /// Every request's body, in order.
    package var requests: [[String: Any]] { lock.withLock { recorded } }

    /// A `.streamedHeld` answer went on without ``release()`` (after 60 s).
    package var holdExpired: Bool {
        get { lock.withLock { expired } }
        set { lock.withLock { expired = newValue } }
    }

    /// Lets a `.streamedHeld` answer go on.
    package func release() { held.signal() }

    package func stop() {
        lock.withLock { running = false }
        shutdown(listener, Int32(SHUT_RDWR))
    }

    private func serve() {
        while lock.withLock({ running }) {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else {
                if errno == EINTR { continue }
                return
            }
            Thread.detachNewThread { [self] in
                handle(connection)
                close(connection)
            }
        }
        close(listener)
    }

    private func handle(_ fd: Int32) {
        var limit = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        var data: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        var headerEnd: Int?
        var length = 0
        while headerEnd == nil || data.count < headerEnd! + 4 + length {
            let n = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            guard n > 0 else { return }
            data += chunk[0..<n]
            if headerEnd == nil, let end = Self.find(Array("\r\n\r\n".utf8), in: data) {
                headerEnd = end
                let head = String(decoding: data[0..<end], as: UTF8.self).lowercased()
                length = head.components(separatedBy: "\r\n").first { $0.hasPrefix("content-length:") }
                    .flatMap { Int($0.dropFirst("content-length:".count).trimmingCharacters(in: .whitespaces)) } ?? 0
            }
        }
        let body = (try? JSONSerialization.jsonObject(with: Data(data[(headerEnd! + 4)...]))) as? [String: Any] ?? [:]
        let answer: Answer = lock.withLock {
            recorded.append(body)
            calls += 1
            return script.count > 1 ? script.removeFirst() : (script.first ?? .text("ok"))
        }
        send(answer, to: fd, call: lock.withLock { calls })
    }

    private func send(_ answer: Answer, to fd: Int32, call: Int) {
        switch answer {
        case .text(let text):
            reply(200, Self.completion(["role": "assistant", "content": text]), to: fd)
        case .toolCalls(let list):
            let calls = list.enumerated().map { index, call in
                ["id": "call_\(call.name)_\(index)", "type": "function", "function": ["name": call.name, "arguments": call.arguments]] as [String: Any]
            }
            reply(200, Self.completion(["role": "assistant", "content": NSNull(), "tool_calls": calls]), to: fd)
        case .streamed(let pieces):
            stream(pieces.map { ["choices": [["index": 0, "delta": ["content": $0]]]] }, to: fd)
        case .streamedToolCall(let name, let arguments):
            let half = arguments.index(arguments.startIndex, offsetBy: arguments.count / 2)
            stream([
                ["choices": [["index": 0, "delta": ["tool_calls": [["index": 0, "id": "call_s", "type": "function", "function": ["name": name, "arguments": String(arguments[..<half])]]]]]]],
                ["choices": [["index": 0, "delta": ["tool_calls": [["index": 0, "function": ["arguments": String(arguments[half...])]]]]]]],
            ], to: fd)
        case .status(let status, let body):
            reply(status, body, to: fd)
        case .garbage(let body):
            reply(200, body, to: fd)
        case .slow(let seconds, let then):
            Thread.sleep(forTimeInterval: seconds)
            send(then, to: fd, call: call)
        case .streamedHeld(let first, let rest):
            streamHead(to: fd)
            for line in Self.deltas(first) { streamChunk(line, to: fd) }
            if held.wait(timeout: .now() + 60) == .timedOut { holdExpired = true }
            for line in Self.deltas(rest) + ["data: [DONE]\n\n"] { streamChunk(line, to: fd) }
            write("0\r\n\r\n", to: fd)
        case .streamedCut(let pieces):
            streamHead(to: fd)
            for line in Self.deltas(pieces) { streamChunk(line, to: fd) }
            write("40\r\ndata: {\"choices\":[{\"delta\":{\"content\":\"lo", to: fd)
        case .streamedGarbage(let pieces):
            streamHead(to: fd)
            for line in Self.deltas(pieces) + ["data: <html>oops</html>\n\n", "data: [DONE]\n\n"] { streamChunk(line, to: fd) }
            write("0\r\n\r\n", to: fd)
        case .streamedForever(let piece):
            streamHead(to: fd)
            let line = Self.deltas([piece])[0]
            let chunk = Array((String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n").utf8)
            let end = Date().addingTimeInterval(120)
            while Date() < end, chunk.withUnsafeBytes({ Glibc.send(fd, $0.baseAddress!, $0.count, Int32(MSG_NOSIGNAL)) }) > 0 {
                Thread.sleep(forTimeInterval: 0.1)
            }
        }
    }

    /// Each piece as a `data:` line of a chat-completion chunk.
    private static func deltas(_ pieces: [String]) -> [String] {
        pieces.map { "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: ["choices": [["index": 0, "delta": ["content": $0]]]]), as: UTF8.self) + "\n\n" }
    }

    private func streamHead(to fd: Int32) {
        write("HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n", to: fd)
    }

    private func streamChunk(_ line: String, to fd: Int32) {
        write(String(line.utf8.count, radix: 16) + "\r\n" + line + "\r\n", to: fd)
    }

    private static func completion(_ message: [String: Any]) -> String {
        let object: [String: Any] = ["id": "chatcmpl-stub", "object": "chat.completion", "model": "stub",
                                     "choices": [["index": 0, "message": message, "finish_reason": "stop"]]]
        return String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self)
    }

    private func reply(_ status: Int, _ body: String, to fd: Int32) {
        write("HTTP/1.1 \(status) X\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)", to: fd)
    }

    /// Server-sent events in chunked transfer encoding, one chunk an event, then `[DONE]`.
    private func stream(_ events: [[String: Any]], to fd: Int32) {
        streamHead(to: fd)
        let lines = events.map { "data: " + String(decoding: try! JSONSerialization.data(withJSONObject: $0), as: UTF8.self) + "\n\n" } + ["data: [DONE]\n\n"]
        for line in lines { streamChunk(line, to: fd) }
        write("0\r\n\r\n", to: fd)
    }

    private func write(_ text: String, to fd: Int32) { WebhookTestServer.send(text, to: fd) }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for index in 0...(haystack.count - needle.count) where haystack[index..<index + needle.count].elementsEqual(needle) { return index }
        return nil
    }
}
