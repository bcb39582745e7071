/// Why a voice message was not answered: a code the fronts map to a status, and a message
/// that says what was found and what to do.
struct SpeechError: Error, CustomStringConvertible, Equatable {
    enum Code: String {
        /// Not a RIFF/WAVE file at all.
        case notWAV = "not_wav"
        /// A WAV file whose header or chunks are damaged or cut short.
        case corrupt
        /// A WAV file in an encoding, rate or layout that is not converted.
        case unsupported
        /// Over the chatbot's `voice.max_bytes` or `voice.max_seconds`.
        case tooLarge = "too_large"
        /// Nothing loud enough to be speech.
        case silence
        /// Sound, but no words recognised in it.
        case noSpeech = "no_speech"
        /// The speech packages are missing on this host (or failed to load).
        case unavailable
        /// Its sender stopped waiting before the recognition ended (it was given up then).
        case timedOut = "timed_out"
    }

    var code: Code
    var message: String
    var description: String { message }

    init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }
}
