import AgentTestSupport
import Foundation
import Testing

/// What one chat message may carry to the chatbot's worker: a worker reads at most 16 MiB a
/// frame (and loses its channel on a larger one), so a message that would not fit is refused
/// with 413 at its pointer before it is sent, whatever `http.max_body_bytes` lets in — any role
/// may chat, so a reader must not be able to take the chat down — and a voice limit that could
/// not be delivered is refused by the settings.
@Suite(.ownThreads, .serialized) struct ChatFrameLimitTests {
    static let processes = #"{"chat": {"type": "chatbot", "logic_adapters": ["features"]}}"#

    @Test func aMessageNoFrameCarriesIsRefusedAndTheChatStaysUp() throws {
        let agent = try APIAgent(http: LanguageModelChatTests.tokens + #", "max_body_bytes": 33554432"#, processes: Self.processes)
        #expect(HTTPAgent.eventually { (try? LanguageModelChatTests.state(agent, "chat")) == "running" })
        let pid = try #require(try LanguageModelChatTests.pid(agent, "chat"))
        let headers = APIAgent.bearer(APIAgent.readToken).merging(["Content-Type": "application/json"]) { $1 }

        let pad = String(repeating: "x", count: 17 << 20)
        let big = try agent.request("POST", "/api/chat", headers: headers, body: #"{"text": "hello", "context": {"pad": ""# + pad + #""}}"#)
        #expect(big.status == 413, "\(big.status) \(big.body.prefix(300)) \(big.failure ?? "")")
        #expect(big.json?["pointer"] as? String == "/context", "\(big.body.prefix(300))")

        // The chatbot kept its worker and answers the next message.
        let small = try agent.request("POST", "/api/chat", headers: headers, body: #"{"text": "hello"}"#)
        #expect(small.status == 200, "\(small.status) \(small.body.prefix(300))")
        #expect(try LanguageModelChatTests.pid(agent, "chat") == pid, "the chat process restarted")
    }

    @Test func aVoiceLimitNoFrameCarriesIsRefusedBySettings() throws {
        let directory = TestPaths.temporaryDirectory("voice-limit")
        let file = directory + "/settings.json"
        try #"{"enabled_modules": [], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["features"], "voice": {"max_bytes": 20971520}}}}"#
            .write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("agent-control", ["validate", "--settings", file, "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any]
        let pointers = (report?["errors"] as? [[String: Any]] ?? []).compactMap { $0["pointer"] as? String }
        #expect(pointers == ["/processes/chat/voice/max_bytes"], "\(result.stdout)")
    }
}
