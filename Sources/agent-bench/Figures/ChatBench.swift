import AgentCore
import Foundation
import JSONSchema

/// Figure 17: the chat path's own overhead around a language-model call. A chatbot whose `llm`
/// adapter talks to a model server that answers at once (a stub of the bench's own); each
/// `POST /api/chat` is timed, and, interleaved with it, a bare `POST /chat/completions` to the
/// same stub (the floor): the overhead is their difference, sample by sample.
enum ChatBench {
    static func run(_ environment: BenchEnvironment) -> Section {
        var section = Section(
            number: 17, title: "Chat with a language model",
            method: "An agent (agent-control console, store on) with a chatbot whose only adapter is `llm` (defaults: 20 lines of history from the store, no tools) pointed at a model stub of the bench that answers every request at once with a fixed completion. Each sample: POST /api/chat {\"text\": \"hello\"} on a new loopback connection (the HTTP front → the supervisor → the chatbot worker → the history query → the model call → the reply kept in the store → the answer), then a bare POST /v1/chat/completions to the stub on a new connection (the floor). Overhead = chat − floor per pair.")
        let stub: InstantModelServer
        do {
            stub = try InstantModelServer()
        } catch {
            section.fail("stub: \(error)")
            return section
        }
        defer { stub.stop() }
        do {
            let settings = """
                {"enabled_modules": [], \(HTTPBench.httpSettings), "processes": {"chat": {"type": "chatbot",
                  "logic_adapters": [{"type": "llm", "base_url": "http://127.0.0.1:\(stub.port)/v1", "model": "bench", "confidence": 1}]}}}
                """
            let file = try environment.writeAgent("chat-llm", settings: settings)
            let run = try ConsoleRun(environment: environment, settingsFile: file)
            defer {
                let (stopped, left) = run.stop(signal: SIGTERM, timeout: 20)
                if stopped == nil || !left.isEmpty { section.fail("agent: stop incomplete, \(left.count) worker(s) left") }
            }
            guard run.wait(timeout: 60, until: { run.readyTimes.count >= 1 && HTTPBench.listeningPort(run) != nil }) else {
                throw BenchError("the chatbot was not ready after 60 s: \(run.errors.prefix(3).joined(separator: " | "))")
            }
            let port = HTTPBench.listeningPort(run)!
            let headers = HTTPBench.authorizationHeaders.merging(["Content-Type": "application/json"]) { $1 }
            let completion = #"{"model": "bench", "messages": [{"role": "user", "content": "hello"}]}"#
            var chat = Samples(), floor = Samples(), overhead = Samples()
            let count = environment.quick ? 200 : 1000
            for index in 0..<(count + 20) {
                var started = Clock.now()
                let answer = try HTTPProbe.request(port: port, method: "POST", path: "/api/chat", headers: headers, body: #"{"text": "hello", "conversation": "bench"}"#)
                let chatSeconds = Clock.now() - started
                guard answer.status == 200, answer.body.contains(InstantModelServer.text) else {
                    throw BenchError("POST /api/chat answered \(answer.status): \(answer.body.prefix(300))")
                }
                started = Clock.now()
                _ = try HTTPProbe.request(port: Int(stub.port), method: "POST", path: "/v1/chat/completions", headers: ["Content-Type": "application/json"], body: completion)
                let floorSeconds = Clock.now() - started
                run.pump(maxWait: 0)
                guard index >= 20 else { continue }  // warm-up
                chat.append(chatSeconds * 1e6)
                floor.append(floorSeconds * 1e6)
                overhead.append((chatSeconds - floorSeconds) * 1e6)
            }
            section.add(Figure("chat path's overhead (chat − bare model call)", .microseconds, samples: overhead, note: "target p50 < 1 ms"))
            section.add(Figure("POST /api/chat with the llm adapter", .microseconds, samples: chat, note: nil))
            section.add(Figure("bare POST /v1/chat/completions to the stub", .microseconds, samples: floor, note: "the floor"))
            section.compare("POST /api/chat with the llm adapter", with: "bare POST /v1/chat/completions to the stub")
        } catch {
            section.fail("\(error)")
        }
        return section
    }
}

/// A model server that answers every chat-completions request at once with the same short
/// completion, one connection at a time, on its own thread.
final class InstantModelServer: @unchecked Sendable {
    static let text = "stub answer"
    let port: UInt16
    private let listener: Int32
    private let answer: [UInt8] = {
        let body = #"{"id":"bench","object":"chat.completion","choices":[{"index":0,"message":{"role":"assistant","content":"\#(InstantModelServer.text)"},"finish_reason":"stop"}]}"#
        return Array("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: \(body.utf8.count)\r\nConnection: close\r\n\r\n\(body)".utf8)
    }()

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue | SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard fd >= 0, bound == 0, listen(fd, 64) == 0 else { throw BenchError("model stub: \(String(cString: strerror(errno)))") }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) { $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) } }
        listener = fd
        port = UInt16(bigEndian: address.sin_port)
        Thread.detachNewThread { [self] in serve() }
    }

    func stop() { shutdown(listener, Int32(SHUT_RDWR)) }

    private func serve() {
        var buffer = [UInt8](repeating: 0, count: 256 << 10)
        while true {
            let connection = accept(listener, nil, nil)
            if connection < 0 {
                if errno == EINTR { continue }
                close(listener)
                return
            }
            var received: [UInt8] = []
            // The request is whole once its head and Content-Length bytes are in.
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
                guard n > 0 else { break }
                received += buffer[0..<n]
                if let end = HTTPHead.end(of: received), received.count >= end + HTTPHead.contentLength(received[..<end]) { break }
            }
            _ = answer.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(connection)
        }
    }
}

/// The end of an HTTP head and its Content-Length.
enum HTTPHead {
    static func end(of bytes: [UInt8]) -> Int? {
        guard bytes.count >= 4 else { return nil }
        for index in 0...(bytes.count - 4) where bytes[index] == 13 && bytes[index + 1] == 10 && bytes[index + 2] == 13 && bytes[index + 3] == 10 {
            return index + 4
        }
        return nil
    }

    static func contentLength(_ head: ArraySlice<UInt8>) -> Int {
        let text = String(decoding: head, as: UTF8.self).lowercased()
        guard let range = text.range(of: "content-length:") else { return 0 }
        return Int(text[range.upperBound...].prefix { $0 != "\r" }.trimmingCharacters(in: .whitespaces)) ?? 0
    }
}
