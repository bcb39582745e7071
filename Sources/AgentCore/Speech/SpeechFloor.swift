/// The speech path's parts without the chatbot, for agent-bench's voice figure: a spoken WAV
/// to send, and the bare PocketSphinx decode of it (the floor).
package final class SpeechFloor {
    private let recognizer: SpeechRecognizer

    /// A decoder set up as the chatbot sets up its own for adapters with these `examples`.
    package init(examples: [String]) throws {
        recognizer = try SpeechRecognizer(model: SpeechRecognizer.defaultModel, examples: examples)
    }

    /// `text` spoken by espeak-ng, padded with silence to `seconds`, as a 16 kHz mono 16-bit WAV.
    package static func spokenWAV(_ text: String, seconds: Double) throws -> [UInt8] {
        let synthesizer = try SpeechSynthesizer.shared.get()
        let spoken = try synthesizer.speak(text)
        var samples = try WAVAudio(header: spoken).samples16k(of: spoken)
        let wanted = Int(seconds * 16_000)
        if samples.count < wanted { samples += [Int16](repeating: 0, count: wanted - samples.count) }
        return WAVAudio.file(samples: samples, rate: 16_000)
    }

    /// The 16 kHz mono samples of a WAV file.
    package static func samples(of wav: [UInt8]) throws -> [Int16] {
        try WAVAudio(header: wav).samples16k(of: wav)
    }

    /// The decode alone: what the chatbot's recogniser hears in `samples`.
    package func recognise(_ samples: [Int16]) -> String? {
        (try? recognizer.recognise(samples)).map { NumberWords.digits(in: $0.text) }
    }
}
