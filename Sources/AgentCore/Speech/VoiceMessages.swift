import Foundation

/// Turns a voice message into the text the chatbot answers: the WAV read and checked against
/// the limits, converted to 16 kHz mono, checked for sound, and recognised. Runs in the
/// chatbot's worker; the recogniser is loaded at the first voice message and kept.
final class VoiceMessages {
    let settings: VoiceSettings
    /// The adapters' usage examples, for the grammar.
    let examples: [String]
    private var recognizer: Result<SpeechRecognizer, SpeechError>?

    init(settings: VoiceSettings, examples: [String]) {
        self.settings = settings
        self.examples = examples
    }

    /// What was said in `audio` (a WAV file's bytes), numbers as digits.
    func transcribe(_ audio: [UInt8], until deadline: Double = .infinity) throws(SpeechError) -> SpeechRecognizer.Transcript {
        let samples = try Self.samples(of: audio, settings: settings)
        var transcript = try recognise(samples, until: deadline)
        transcript.text = NumberWords.digits(in: transcript.text)
        return transcript
    }

    /// The recording's samples at 16 kHz mono, after every check that needs no recogniser.
    static func samples(of audio: [UInt8], settings: VoiceSettings) throws(SpeechError) -> [Int16] {
        guard audio.count <= settings.maximumBytes else {
            throw SpeechError(.tooLarge, "the recording is \(audio.count) bytes; the chatbot takes at most \(settings.maximumBytes) (its voice.max_bytes)")
        }
        let wav = try WAVAudio(header: audio)
        guard wav.duration <= settings.maximumSeconds else {
            throw SpeechError(.tooLarge, "the recording is \(String(format: "%.1f", wav.duration)) s long; the chatbot takes at most \(settings.maximumSeconds.compactText) s (its voice.max_seconds)")
        }
        let samples = wav.samples16k(of: audio)
        let level = WAVAudio.level(samples)
        guard level >= settings.silenceLevel else {
            throw SpeechError(.silence, "the recording is silent (level \(String(format: "%.1f", level)), below the chatbot's voice.silence_level \(settings.silenceLevel.compactText)): nothing to recognise; check the microphone")
        }
        return samples
    }

    /// The recogniser's words for `samples`.
    func recognise(_ samples: [Int16], until deadline: Double = .infinity) throws(SpeechError) -> SpeechRecognizer.Transcript {
        let loaded = try recognizerLoaded()
        guard let transcript = try loaded.recognise(samples, until: deadline) else {
            throw SpeechError(.noSpeech, "no words recognised in the recording (noise, or speech too unclear); speak closer to the microphone, in English")
        }
        return transcript
    }

    /// The recogniser, loaded at the first call (a load that failed is not tried again: the
    /// packages do not appear while the worker runs).
    func recognizerLoaded() throws(SpeechError) -> SpeechRecognizer {
        if recognizer == nil {
            recognizer = Result { () throws(SpeechError) in try SpeechRecognizer(model: settings.model, examples: examples) }
        }
        return try recognizer!.get()
    }
}

