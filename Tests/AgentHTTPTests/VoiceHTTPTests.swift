import AgentTestSupport
import Foundation
import Testing

/// `POST /api/chat/voice` on the real HTTP front: the WAV file itself as an `audio/wav` body,
/// recognised in the chatbot's worker and answered, spoken on request; a bad body refused with
/// its reason and status, the chat process up throughout.
@Suite(.ownThreads, .serialized) struct VoiceHTTPTests {
    static let processes = """
    {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01},
     "chat": {"type": "chatbot", "logic_adapters": ["features", "sample.trades_counter"], "voice": {"max_seconds": 10}}}
    """

    func post(_ agent: HTTPAgent, _ query: String, file: String, type: String = "audio/wav") throws -> CurlResponse {
        try curl("POST", "http://127.0.0.1:\(agent.port)/api/chat/voice\(query)",
                 headers: HTTPAgent.authorization.merging(["Content-Type": type]) { _, new in new }, extra: ["--data-binary", "@" + file])
    }

    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func aWAVBodyIsTranscribedAnsweredAndSpoken() throws {
        try SpeechPackages.require()
        let agent = try HTTPAgent(processes: Self.processes)
        let directory = TestPaths.temporaryDirectory("voice-http")
        let question = directory + "/question.wav"
        try SpeechPackages.speak("how many trades in the last five minutes", into: question)
        #expect(try HTTPAgent.eventually { try agent.statusField("chat", "state") as? String == "running" })
        let pid = try agent.statusField("chat", "pid") as? Int

        var answer = try post(agent, "?conversation=ops&speak=true", file: question)
        #expect(try HTTPAgent.eventually {
            answer = try post(agent, "?conversation=ops&speak=true", file: question)
            return (answer.json?["text"] as? String)?.contains("(X/Y ") == true
        }, "\(answer)")
        let json = try #require(answer.json)
        #expect(answer.status == 200)
        #expect(json["transcript"] as? String == "how many trades in the last 5 minutes", "\(json)")
        #expect(json["adapter"] as? String == "sample.trades_counter")
        #expect((json["transcript_confidence"] as? Double).map { (0...1).contains($0) } == true)
        let speech = try #require((json["speech"] as? String).flatMap { Data(base64Encoded: $0) })
        #expect(speech.prefix(4) == Data("RIFF".utf8) && speech.count > 22_050, "\(speech.count) bytes of speech")

        // The conversation has the transcript with its confidence, then the answer.
        let history = try agent.request("GET", "/api/chat/ops")
        let lines = history.json?["lines"] as? [[String: Any]] ?? []
        let voiceLine = try #require(lines.last { $0["source"] as? String == "voice" }, "\(history.body)")
        #expect(voiceLine["role"] as? String == "user" && voiceLine["text"] as? String == "how many trades in the last 5 minutes")
        #expect(voiceLine["confidence"] is Double, "\(voiceLine)")
        #expect((lines.last?["text"] as? String)?.hasPrefix("There were ") == true, "\(history.body)")

        // Refusals: their reason and status; the chatbot stays up.
        let notes = directory + "/notes.wav"
        try Data("not a recording".utf8).write(to: URL(fileURLWithPath: notes))
        let notWAV = try post(agent, "", file: notes)
        #expect(notWAV.status == 400, "\(notWAV)")
        #expect(notWAV.json?["pointer"] as? String == "/audio")
        #expect((notWAV.json?["error"] as? String)?.contains("not a WAV file") == true, "\(notWAV)")
        let long = directory + "/long.wav"
        try Data(WAVBuilder.file(rate: 8_000, channels: 1, bits: 16, frames: 96_000) { frame, _ in WAVBuilder.tone(frame, rate: 8_000) })
            .write(to: URL(fileURLWithPath: long))
        let tooLong = try post(agent, "", file: long)
        #expect(tooLong.status == 413, "\(tooLong)")
        #expect((tooLong.json?["error"] as? String)?.contains("12.0 s long; the chatbot takes at most 10 s (its voice.max_seconds)") == true, "\(tooLong)")
        let unknownMember = try post(agent, "?volume=11", file: question)
        #expect(unknownMember.status == 400 && unknownMember.json?["pointer"] as? String == "/volume", "\(unknownMember)")
        #expect(try agent.statusField("chat", "pid") as? Int == pid, "the chat process restarted")
    }
}
