import AgentTestSupport
import Foundation
import Testing

/// A language model's answer streamed as it comes, through the real agent against the test
/// suite's model stub: the stub holds its answer after the first pieces until the test has
/// seen them arrive at the front (the CLI on a terminal, `POST /api/chat` as server-sent
/// events), so the pieces cannot have come with the whole answer. A broken stream ends with a
/// clear answer that keeps what came, in the history, and the chatbot keeps its pid.
@Suite(.ownThreads, .serialized) struct ChatStreamingTests {
    static func agent(_ stub: ChatCompletionStub, _ adapter: String = "") throws -> APIAgent {
        try LanguageModelChatTests.agent(stub, #""history": 0"# + (adapter.isEmpty ? "" : ", " + adapter))
    }

    /// `POST /api/chat` with `"stream": true`, opened as an event stream.
    static func stream(_ agent: APIAgent, _ text: String, token: String = APIAgent.adminToken) throws -> EventStreamClient {
        let port = try #require(Int(agent.base.split(separator: ":").last ?? ""))
        let body = String(decoding: try JSONSerialization.data(withJSONObject: ["text": text, "stream": true, "conversation": "sse"]), as: UTF8.self)
        return try EventStreamClient(port: port, path: "/api/chat", headers: ["Authorization": "Bearer \(token)", "Content-Type": "application/json"],
                                     body: body, timeout: 60)
    }

    /// The pieces of a streamed chat and its answer's text, once the stream ends.
    static func drain(_ events: EventStreamClient) throws -> (pieces: [String], answer: String) {
        var pieces: [String] = []
        var text = ""
        while let event = try events.next() {
            if event.name == "partial" { pieces.append(event.json?["text"] as? String ?? "") }
            if event.name == "answer" { text = event.json?["text"] as? String ?? event.data }
        }
        return (pieces, text)
    }

    @Test func theCommandLinePrintsTheAnswerAsItComes() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.streamedHeld(["Hel", "lo"], rest: [" wor", "ld."]))
        let agent = try Self.agent(stub)
        var releasedAfter = ""
        let output = try runOnTerminal("agent-control", ["chat", "hi", "--settings", agent.run.settingsFile], in: agent.run.directory, timeout: 90) { shown in
            // The first pieces are on the terminal while the model still holds the rest.
            if releasedAfter.isEmpty, shown.contains("bot> Hello") {
                releasedAfter = shown
                stub.release()
            }
            // The line's end too: a SIGTERM between the last piece and it ends the command first.
            return shown.contains("world.\r\n")
        }
        #expect(!stub.holdExpired, "the pieces did not reach the terminal before the model went on:\n\(output)")
        #expect(releasedAfter.hasSuffix("bot> Hello") && !releasedAfter.contains("wor"), "\(releasedAfter)")
        #expect(output.contains("bot> Hello world.\r\n"), "\(output)")
        // The history keeps the answer whole, once.
        let history = try runProgram("agent-control", ["chat", "--history", "--settings", agent.run.settingsFile]).stdout
        #expect(history.contains("bot> Hello world.\n") && history.components(separatedBy: "bot>").count == 2, "\(history)")
    }

    @Test func theAPIAnswersWithServerSentEventsAsTheyCome() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.streamedHeld(["Hel", "lo"], rest: [" wor", "ld."]))
        let agent = try Self.agent(stub)
        // Any role may chat: the read token streams too.
        let events = try Self.stream(agent, "hi", token: APIAgent.readToken)
        #expect(events.status == 200 && events.headers["content-type"]?.hasPrefix("text/event-stream") == true, "\(events.headers)")
        let first = try #require(try events.next())
        let second = try #require(try events.next())
        #expect(first.name == "partial" && first.json?["text"] as? String == "Hel", "\(first.data)")
        #expect(second.name == "partial" && second.json?["text"] as? String == "lo", "\(second.data)")
        stub.release()
        var names: [String] = []
        var answer: [String: Any]?
        while let event = try events.next() {
            names.append(event.name ?? "")
            if event.name == "answer" { answer = event.json }
        }
        #expect(!stub.holdExpired)
        #expect(names == ["partial", "partial", "answer"], "\(names)")
        #expect(answer?["ok"] as? Bool == true && answer?["text"] as? String == "Hello world.", "\(String(describing: answer))")
        // Accept: text/event-stream asks for the same; without either, the answer comes whole.
        stub.script(.streamed(["a", "b"]))
        let port = try #require(Int(agent.base.split(separator: ":").last ?? ""))
        let byHeader = try EventStreamClient(port: port, path: "/api/chat", headers: APIAgent.bearer(APIAgent.adminToken).merging(["Content-Type": "application/json"]) { $1 },
                                             body: #"{"text": "again"}"#)
        var last: EventStreamClient.Event?
        while let event = try byHeader.next() { last = event }
        #expect(last?.name == "answer" && last?.json?["text"] as? String == "ab", "\(String(describing: last?.data))")
        #expect(try LanguageModelChatTests.chat(agent, "whole", token: APIAgent.adminToken) == "ab")
    }

    @Test func aBrokenStreamEndsWithAClearAnswerThatKeepsWhatCame() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        let agent = try Self.agent(stub, #""timeout": 2"#)
        let chatbot = try #require(try LanguageModelChatTests.pid(agent, "chat"))
        func ask(_ answer: ChatCompletionStub.Answer) throws -> (pieces: [String], answer: String) {
            stub.script(answer)
            return try Self.drain(try Self.stream(agent, "hello"))
        }
        let endpoint = "the language model at \(stub.baseURL)/chat/completions"
        let cut = try ask(.streamedCut(["Hel"]))
        #expect(cut.pieces == ["Hel"] && cut.answer == "Hel\nSorry: \(endpoint) broke off its answer after 1 pieces (the answer ended in the middle of a chunk).", "\(cut)")
        let garbage = try ask(.streamedGarbage(["Hel", "lo"]))
        #expect(garbage.answer.hasPrefix("Hello\nSorry: the language model server's answer is not a chat completion"), "\(garbage)")
        // Never-ending: what came by the adapter's timeout, and why it ends.
        let endless = try ask(.streamedForever("la "))
        #expect(!endless.pieces.isEmpty && endless.answer == endless.pieces.joined() + "\nSorry: \(endpoint) did not finish its answer within 2 s (\(endless.pieces.count) pieces came).", "\(endless)")
        // A stream without its end ([DONE] or a finish_reason) is not taken as whole.
        stub.script(.status(200, "data: {\"choices\":[{\"delta\":{\"content\":\"half\"}}]}\n\n"))
        let unfinished = try LanguageModelChatTests.chat(agent, "hello", token: APIAgent.adminToken)
        #expect(unfinished.hasPrefix("half\nSorry: the language model's stream ended after 1 pieces without its end"), "\(unfinished)")
        // Nothing lost: each question and its answer with what came are in the history; the chatbot is the same process.
        let history = try runProgram("agent-control", ["chat", "--history", "--conversation", "sse", "--settings", agent.run.settingsFile]).stdout
        #expect(history.components(separatedBy: "token #1> hello").count == 4, "\(history)")  // the admin token, unnamed, is the first
        #expect(history.contains("bot> Hel\nSorry: \(endpoint) broke off"), "\(history)")
        #expect(try LanguageModelChatTests.pid(agent, "chat") == chatbot)
    }

    @Test func aToolCallSplitAcrossChunksRunsAndItsAnswerStreams() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.streamedToolCall(name: "status", arguments: "{}"), .streamed(["All ", "running."]))
        let agent = try Self.agent(stub, #""tools": ["status"]"#)
        let (pieces, answer) = try Self.drain(try Self.stream(agent, "status?"))
        #expect(pieces == ["All ", "running."] && answer == "All running.", "\(pieces) \(answer)")
        #expect(LanguageModelChatTests.toolResult(stub, 1).contains(#""name":"trades""#), "\(LanguageModelChatTests.toolResult(stub, 1))")
    }
}
