import AgentTestSupport
import Foundation
import Testing

/// Voice messages through the real agent: a WAV spoken by espeak-ng → `agent-control chat
/// --voice` → control socket → supervisor → the chatbot's worker (PocketSphinx loaded there
/// with dlopen) → the trades adapter → the answer, the transcript kept in the conversation.
/// Skipped where the speech packages are missing, except under CI=true, where that fails.
@Suite(.ownThreads, .serialized) struct VoiceChatTests {
    static let settings = """
    {"enabled_modules": ["sample"], "processes": {
      "trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01},
      "chat": {"type": "chatbot", "logic_adapters": ["features", "status", "sample.trades_counter"],
               "voice": {"max_bytes": 400000, "max_seconds": 6}}}}
    """

    let directory = TestPaths.temporaryDirectory("voice")

    func spoken(_ text: String, as name: String) throws -> String {
        let path = directory + "/" + name
        try SpeechPackages.speak(text, into: path)
        return path
    }

    func write(_ bytes: [UInt8], as name: String) throws -> String {
        let path = directory + "/" + name
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        return path
    }

    func voice(_ agent: ChatTests.Agent, _ file: String, _ extra: [String] = []) throws -> ProgramResult {
        try runProgram("agent-control", ["chat", "--voice", file, "--settings", agent.settings] + extra, in: directory)
    }

    /// The chat process's pid, once it runs.
    func chatPID(_ agent: ChatTests.Agent) throws -> Int {
        let status = try runProgram("agent-control", ["status", "--json", "--settings", agent.settings])
        let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
        let chat = (object?["processes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "chat" }
        #expect(chat?["state"] as? String == "running", "\(status.stdout)")
        return try #require(chat?["pid"] as? Int)
    }

    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func aSpokenQuestionIsTranscribedAndAnsweredByTheTradesAdapter() throws {
        try SpeechPackages.require()
        let agent = try ChatTests.Agent(Self.settings)
        try agent.waitForReady(2)
        let question = try spoken("how many trades in the last five minutes", as: "trades.wav")
        // Asked until the feed's first trades are in the store.
        var answer = try voice(agent, question)
        let deadline = Date().addingTimeInterval(60)
        while !answer.stdout.contains("(X/Y "), Date() < deadline {
            Thread.sleep(forTimeInterval: 0.2)
            answer = try voice(agent, question)
        }
        #expect(answer.status == 0, "\(answer.stderr)")
        #expect(answer.stdout.contains("you (voice, confidence "), "\(answer.stdout)")
        #expect(answer.stdout.contains(")> how many trades in the last 5 minutes\n"), "\(answer.stdout)")
        #expect(answer.stdout.contains("bot> There were "), "\(answer.stdout)")
        #expect(answer.stdout.contains(" trades in the last 5 minutes (X/Y "), "\(answer.stdout)")

        // Both the transcript (with its confidence) and the answer are in the conversation.
        let history = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settings])
        #expect(history.stdout.contains("you (voice, confidence "), "\(history.stdout)")
        #expect(history.stdout.contains("> how many trades in the last 5 minutes\n"), "\(history.stdout)")
        #expect(history.stdout.contains("bot> There were "), "\(history.stdout)")

        // The answer spoken: a WAV the recogniser itself reads back as words.
        let spokenAnswer = try voice(agent, question, ["--speak", "--speech-file", "answer.wav"])
        #expect(spokenAnswer.status == 0, "\(spokenAnswer.stderr)")
        #expect(spokenAnswer.stdout.contains("the spoken answer is in answer.wav"), "\(spokenAnswer.stdout)")
        let wav = try [UInt8](Data(contentsOf: URL(fileURLWithPath: directory + "/answer.wav")))
        #expect(wav.count > 22_050, "a spoken sentence is more than half a second: \(wav.count) bytes")
        #expect(String(decoding: wav.prefix(4), as: UTF8.self) == "RIFF" && String(decoding: wav[8..<12], as: UTF8.self) == "WAVE")
    }

    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func badRecordingsGetClearErrorsAndTheChatProcessStaysUp() throws {
        try SpeechPackages.require()
        let agent = try ChatTests.Agent(Self.settings)
        try agent.waitForReady(2)
        let pid = try chatPID(agent)
        let noise = WAVBuilder.noise(rate: 16_000, frames: 48_000, amplitude: 0.3)
        let tone = WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 16_000) { frame, _ in WAVBuilder.tone(frame, rate: 16_000) }
        let cases: [(name: String, bytes: [UInt8], expected: String)] = [
            ("silence.wav", WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 32_000) { _, _ in 0 }, "the recording is silent"),
            ("noise.wav", noise, "no words recognised in the recording"),
            ("corrupt.wav", Array(tone.prefix(30)), "the WAV file's \"fmt \" chunk is 10 bytes; it needs at least 16"),
            ("notes.txt", Array("these are my notes, not a recording\n".utf8), "not a WAV file: expected \"RIFF\""),
            ("mulaw.wav", WAVBuilder.wrap(data: [UInt8](repeating: 0xFF, count: 8_000), rate: 8_000, channels: 1, bits: 8, tag: 7), "unsupported WAV encoding: µ-law"),
            ("slow.wav", WAVBuilder.wrap(data: [UInt8](repeating: 0x20, count: 8_000), rate: 4_000, channels: 1, bits: 16), "sample rate is 4000 Hz"),
            ("large.wav", WAVBuilder.file(rate: 44_100, channels: 2, bits: 16, frames: 110_250) { frame, _ in WAVBuilder.tone(frame, rate: 44_100) },
             "the chatbot chat takes at most 400000 (its voice.max_bytes)"),
            ("long.wav", WAVBuilder.file(rate: 8_000, channels: 1, bits: 8, frames: 64_000) { frame, _ in WAVBuilder.tone(frame, rate: 8_000) },
             "the recording is 8.0 s long; the chatbot takes at most 6 s (its voice.max_seconds)"),
        ]
        for (name, bytes, expected) in cases {
            let result = try voice(agent, try write(bytes, as: name))
            #expect(result.status != 0, "\(name) was answered: \(result.stdout)")
            #expect(result.stderr.contains(expected), "\(name): \(result.stderr)")
            #expect(try chatPID(agent) == pid, "the chat process restarted after \(name)")
        }
        // Still answering, and nothing of the refused ones joined the conversation.
        let answer = try voice(agent, try spoken("what can you do", as: "help.wav"))
        #expect(answer.stdout.contains("bot> I can answer:"), "\(answer.stdout)\(answer.stderr)")
        let history = try runProgram("agent-control", ["chat", "--history", "--settings", agent.settings])
        #expect(history.stdout.components(separatedBy: "you (voice").count == 2, "\(history.stdout)")
        #expect(try chatPID(agent) == pid)
    }

    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func aMissingSpeechModelIsAClearErrorNamingThePackage() throws {
        try SpeechPackages.require()
        let agent = try ChatTests.Agent("""
        {"enabled_modules": [], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["features"], "voice": {"model": "/nonexistent/en-us"}}}}
        """)
        try agent.waitForReady(1)
        let result = try voice(agent, try spoken("what can you do", as: "help.wav"))
        #expect(result.status != 0)
        #expect(result.stderr.contains("install the Debian package pocketsphinx-en-us"), "\(result.stderr)")
    }

    /// The adversary's WAV files: each refused with a reason or answered, and the chatbot's
    /// worker (where they are read) never dies.
    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func hostileWAVFilesNeverCrashTheChatbotsWorker() throws {
        try SpeechPackages.require()
        let agent = try ChatTests.Agent(Self.settings)
        try agent.waitForReady(2)
        let pid = try chatPID(agent)
        let loud: (Int, Int) -> Double = { frame, _ in frame % 20 < 10 ? 1 : -1 }
        var manyEmptyChunks = Array(WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 1, sample: loud).prefix(36))
        for _ in 0..<5_000 { manyEmptyChunks += WAVBuilder.chunk("junk", []) }
        manyEmptyChunks += WAVBuilder.chunk("data", [UInt8](repeating: 0x7F, count: 3_200))
        var hugeList = WAVBuilder.wrap(data: [1, 2, 3, 4], rate: 16_000, channels: 1, bits: 16)
        if let at = hugeList.indices.first(where: { Array(hugeList[$0..<min($0 + 4, hugeList.count)]) == Array("LIST".utf8) }) {
            hugeList.replaceSubrange((at + 4)..<(at + 8), with: [0xFF, 0xFF, 0xFF, 0xFF])
        }
        var nonFinite: [UInt8] = []
        for index in 0..<(32 * 1_000) { WAVBuilder.append(&nonFinite, [Float.nan, .infinity, -.infinity, 1e30][index % 4].bitPattern, 4) }
        let files: [(String, [UInt8])] = [
            ("one-frame.wav", WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 1, sample: loud)),
            ("ten-ms.wav", WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 160, sample: loud)),
            ("clipping.wav", WAVBuilder.file(rate: 192_000, channels: 1, bits: 8, frames: 192_000, sample: loud)),
            ("empty-chunks.wav", manyEmptyChunks),
            ("huge-list.wav", hugeList),
            ("header-only.wav", Array(WAVBuilder.file(rate: 16_000, channels: 1, bits: 16, frames: 0, sample: loud).prefix(44))),
            ("non-finite.wav", WAVBuilder.wrap(data: nonFinite, rate: 48_000, channels: 32, bits: 32, tag: 3)),
            ("odd-align.wav", WAVBuilder.wrap(data: [UInt8](repeating: 9, count: 999), rate: 16_000, channels: 3, bits: 24, align: 7)),
            ("extensible-cut.wav", Array(WAVBuilder.file(rate: 16_000, channels: 2, bits: 24, frames: 100, extensible: true, sample: loud).prefix(50))),
        ]
        for (name, bytes) in files {
            let result = try voice(agent, try write(bytes, as: name))
            #expect(result.status == 0 || !result.stderr.isEmpty, "\(name): no answer and no reason")
            #expect(try chatPID(agent) == pid, "the chat process restarted after \(name): \(result.stderr)")
        }
    }

    /// The grammar matched unrelated speech to a command ("restart your computer if the screen
    /// freezes" became "restart the trades process"), and process control ran it. A spoken
    /// process command is now asked back, and done on the same person's "yes", typed or said.
    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func aSpokenProcessCommandWaitsForAYes() throws {
        try SpeechPackages.require()
        let agent = try ChatTests.Agent("""
        {"enabled_modules": ["sample"], "processes": {
          "trades": {"type": "trade_feed", "interval": 0.5},
          "chat": {"type": "chatbot", "logic_adapters": ["status", "process_control"], "allow_process_control": true,
                   "voice": {"max_bytes": 400000, "max_seconds": 6}}}}
        """)
        try agent.waitForReady(2)
        func tradesPID() throws -> Int? {
            let status = try runProgram("agent-control", ["status", "--json", "--settings", agent.settings])
            let object = try JSONSerialization.jsonObject(with: Data(status.stdout.utf8)) as? [String: Any]
            return (object?["processes"] as? [[String: Any]] ?? []).first { $0["name"] as? String == "trades" }?["pid"] as? Int
        }
        func restarted(from pid: Int) throws -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                if let now = try tradesPID(), now != pid { return true }
                Thread.sleep(forTimeInterval: 0.05)
            }
            return false
        }
        let request = try spoken("restart the trades process", as: "restart.wav")
        let first = try #require(try tradesPID())
        let asked = try voice(agent, request)
        #expect(asked.stdout.contains("bot> Restart trades? I heard \"restart the trades process\". Say or type \"yes\" to do it."),
                "\(asked.stdout)\(asked.stderr)")
        #expect(try tradesPID() == first, "restarted before the yes")
        let typed = try agent.chat("yes")
        #expect(typed.stdout == "bot> Restart of trades requested.\n", "\(typed.stdout)\(typed.stderr)")
        #expect(try restarted(from: first))

        // Said, then answered "no" after another question: nothing is done.
        let second = try #require(try tradesPID())
        _ = try voice(agent, request)
        let status = try agent.chat("what is the status of the processes?")
        #expect(status.stdout.contains("trades: running (pid "), "\(status.stdout)\(status.stderr)")
        let no = try agent.chat("no")
        #expect(no.stdout == "bot> Not done: restart of trades (it waited for a \"yes\").\n", "\(no.stdout)\(no.stderr)")
        #expect(try tradesPID() == second)

        // Said, and confirmed by voice.
        _ = try voice(agent, request)
        let yes = try voice(agent, try spoken("yes", as: "yes.wav"))
        #expect(yes.stdout.contains("bot> Restart of trades requested."), "\(yes.stdout)\(yes.stderr)")
        #expect(try restarted(from: second))
    }
}
