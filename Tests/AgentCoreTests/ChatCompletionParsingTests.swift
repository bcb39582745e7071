@testable import AgentCore
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The `llm` adapter's reading of what a model server sends: an HTTP answer however its body
/// comes (Content-Length, chunked in any pieces, until close), a whole chat completion, and a
/// streamed one put together; garbage is refused in words.
@Suite(.ownThreads) struct ChatCompletionParsingTests {
    /// Feeds `bytes` in pieces of `size`; the body, or the problem.
    static func read(_ text: String, pieces size: Int, streaming: Bool = false) -> (status: Int, body: String, complete: Bool, problem: String?) {
        var reader = HTTPResponseReader(maximumBytes: 1 << 20)
        var streamed: [UInt8] = []
        let bytes = Array(text.utf8)
        var complete = false
        do {
            var index = 0
            while index < bytes.count, !complete {
                complete = try reader.feed(Array(bytes[index..<min(bytes.count, index + size)]), ended: false, onBody: streaming ? { streamed += $0 } : nil)
                index += size
            }
            if !complete { complete = try reader.feed([], ended: true, onBody: streaming ? { streamed += $0 } : nil) }
        } catch {
            return (reader.status, "", false, "\(error)")
        }
        return (reader.status, String(decoding: streaming ? streamed : reader.body, as: UTF8.self), complete, nil)
    }

    @Test func aBodyIsReadHoweverItComes() {
        let chunked = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n7;x=1\r\n, world\r\n0\r\n\r\n"
        for size in [1, 2, 3, 7, 1000] {
            #expect(Self.read(chunked, pieces: size) == (200, "hello, world", true, nil), "pieces of \(size)")
            #expect(Self.read(chunked, pieces: size, streaming: true).body == "hello, world")
            #expect(Self.read("HTTP/1.1 404 No\r\nContent-Length: 3\r\n\r\nabcdef", pieces: size) == (404, "abc", true, nil))
            #expect(Self.read("HTTP/1.0 200 OK\r\n\r\nuntil close", pieces: size) == (200, "until close", true, nil))
        }
        #expect(Self.read("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", pieces: 100).problem?.contains("chunk size") == true)
        #expect(Self.read("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc", pieces: 100).problem?.contains("7 bytes before its Content-Length") == true)
        #expect(Self.read("SSH-2.0-OpenSSH\r\n\r\n", pieces: 100).problem == "the answer is not HTTP")
        var small = HTTPResponseReader(maximumBytes: 10)
        #expect(throws: HTTPResponseReader.Problem.self) { try small.feed(Array(repeating: 65, count: 11), ended: false, onBody: nil) }
    }

    @Test func aCompletionGivesItsTextAndToolCalls() throws {
        let body = #"{"choices": [{"message": {"role": "assistant", "content": null, "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "status", "arguments": "{}"}}, {"id": "c2", "function": {"name": "memory_get", "arguments": {"key": "k"}}}]}}]}"#
        let turn = try ChatCompletionClient.turn(Array(body.utf8)).get()
        #expect(turn == ModelTurn(text: "", toolCalls: [ModelToolCall(id: "c1", name: "status", arguments: "{}"), ModelToolCall(id: "c2", name: "memory_get", arguments: #"{"key":"k"}"#)]))
        for garbage in ["", "<html>", "[]", #"{"choices": []}"#, #"{"choices": [{"message": "hi"}]}"#] {
            guard case .failure(let failure) = ChatCompletionClient.turn(Array(garbage.utf8)) else { Issue.record("took \(garbage)"); continue }
            #expect(failure.description.hasPrefix("the language model server's answer is not a chat completion"))
        }
        #expect(ChatCompletionClient.refusal(503, Array(#"{"error": {"message": "loading model"}}"#.utf8)).description == "the language model server answered HTTP 503: loading model")
    }

    @Test func aStreamIsPutTogetherAcrossPieces() throws {
        let stream = """
            data: {"choices":[{"delta":{"content":"Hel"}}]}\r
            \r
            data: {"choices":[{"delta":{"content":"lo","tool_calls":[{"index":0,"id":"a","function":{"name":"sta","arguments":"{\\"x\\""}}]}}]}

            : a comment
            data: {"choices":[{"delta":{"tool_calls":[{"index":0,"function":{"name":"tus","arguments":":1}"}}]}}]}

            data: [DONE]

            """
        for size in [1, 5, 64, 4096] {
            var events = ServerSentEvents()
            var pieces: [String] = []
            let bytes = Array(stream.utf8)
            var index = 0
            while index < bytes.count {
                events.feed(Array(bytes[index..<min(bytes.count, index + size)])) { pieces.append($0) }
                index += size
            }
            #expect(try events.turn().get() == ModelTurn(text: "Hello", toolCalls: [ModelToolCall(id: "a", name: "status", arguments: #"{"x":1}"#)]))
            #expect(pieces == ["Hel", "lo"])
        }
        var bad = ServerSentEvents()
        bad.feed(Array("data: {oops\n\n".utf8)) { _ in }
        #expect(throws: ModelFailure.self) { try bad.turn().get() }
        var empty = ServerSentEvents()
        empty.feed(Array("event: ping\n\n".utf8)) { _ in }
        #expect(throws: ModelFailure.self) { try empty.turn().get() }
    }

    @Test func aStreamCutBeforeItsEndFailsAndKeepsItsText() throws {
        var cut = ServerSentEvents()
        cut.feed(Array("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\n".utf8)) { _ in }
        let failure = try #require(throws: ModelFailure.self) { try cut.turn().get() }
        #expect(failure.partial == "Hel" && failure.description.contains("without its end"), "\(failure)")
        // A finish_reason ends it as [DONE] does.
        var finished = ServerSentEvents()
        finished.feed(Array("data: {\"choices\":[{\"delta\":{\"content\":\"Hi\"},\"finish_reason\":\"stop\"}]}\n\n".utf8)) { _ in }
        #expect(try finished.turn().get().text == "Hi")
        // Garbage after text: the failure keeps the text.
        var garbage = ServerSentEvents()
        garbage.feed(Array("data: {\"choices\":[{\"delta\":{\"content\":\"Hel\"}}]}\n\ndata: <html>\n\ndata: [DONE]\n\n".utf8)) { _ in }
        #expect(throws: ModelFailure.self) { try garbage.turn().get() }
        if case .failure(let problem) = garbage.turn() { #expect(problem.partial == "Hel") }
    }

    @Test func aServerThatIgnoresStreamIsReadWhole() throws {
        let whole = #"{"choices":[{"index":0,"message":{"role":"assistant","content":"whole answer"},"finish_reason":"stop"}]}"#
        for size in [1, 7, 4096] {
            var events = ServerSentEvents()
            let bytes = Array(whole.utf8)
            var index = 0
            var pieces: [String] = []
            while index < bytes.count {
                events.feed(Array(bytes[index..<min(bytes.count, index + size)])) { pieces.append($0) }
                index += size
            }
            #expect(try events.turn().get().text == "whole answer" && pieces.isEmpty, "pieces of \(size)")
        }
    }

    @Test func partialAnswersAreBoundedPerMessage() {
        var sent: [JSONValue] = []
        let relay = PartialAnswerRelay(id: "m1") { sent.append($0) }
        relay.relay("Hel")
        #expect(sent == [["id": "m1", "text": "Hel"]])
        relay.relay(String(repeating: "x", count: PartialAnswerRelay.maximumPiece + 10))
        #expect(sent.last?["text"]?.stringValue?.utf8.count == PartialAnswerRelay.maximumPiece)
        while relay.bytes < PartialAnswerRelay.maximumTotal, relay.count < PartialAnswerRelay.maximumPieces { relay.relay(String(repeating: "y", count: 10_000)) }
        let count = sent.count
        relay.relay("more")
        #expect(sent.count == count && sent.reduce(0) { $0 + ($1["text"]?.stringValue?.utf8.count ?? 0) } <= PartialAnswerRelay.maximumTotal)
        // A message without an id (nothing to relay it to) sends nothing.
        let anonymous = PartialAnswerRelay(id: "") { sent.append($0) }
        anonymous.relay("x")
        #expect(sent.count == count)
    }
}
