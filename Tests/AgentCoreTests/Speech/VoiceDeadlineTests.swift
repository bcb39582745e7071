@testable import AgentCore
import AgentTestSupport
import Foundation
import Testing

/// A voice message is recognised within its sender's deadline: 4 minutes of audio held the
/// chatbot's worker for minutes after the sender had given up, every other chat failing.
@Suite(.ownThreads) struct VoiceDeadlineTests {
    @Test(.enabled(if: SpeechPackages.testable, SpeechPackages.reason))
    func aLongRecordingIsGivenUpAtItsSendersDeadline() throws {
        try SpeechPackages.require()
        let folder = TestPaths.temporaryDirectory("voice-deadline")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let sentence = "The weather in the mountains was cold and the quick brown fox jumped over the lazy dog near the river. "
        try SpeechPackages.speak(String(repeating: sentence, count: 16), into: folder + "/long.wav")
        let audio = [UInt8](try Data(contentsOf: URL(fileURLWithPath: folder + "/long.wav")))
        var settings = VoiceSettings()
        settings.maximumSeconds = 600
        settings.maximumBytes = VoiceLimits.largestMaximumBytes
        let voice = VoiceMessages(settings: settings, examples: ["count the trades", "restart the trades process"])
        // Loaded first: the model's load (a second or two) is not what the deadline bounds.
        _ = try voice.recognizerLoaded()
        let seconds = try WAVAudio(header: audio).duration
        try #require(seconds > 60, "the recording is \(seconds) s")
        let started = ProgramChatAdapter.now()
        #expect {
            _ = try voice.transcribe(audio, until: started + 0.3)
        } throws: { error in
            (error as? SpeechError)?.code == .timedOut && "\(error)".contains("its sender had stopped waiting")
        }
        // Given up at the next half second of audio after the deadline, not after the minute.
        #expect(ProgramChatAdapter.now() - started < seconds / 4, "\(ProgramChatAdapter.now() - started) s for \(seconds) s of audio")
    }
}
