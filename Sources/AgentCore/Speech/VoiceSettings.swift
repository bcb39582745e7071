import JSONSchema

/// The chatbot's `voice` settings: the limits of a voice message and the speech model.
struct VoiceSettings: Equatable {
    /// An upload larger than this is refused before it is read.
    var maximumBytes = VoiceLimits.defaultMaximumBytes
    /// A recording longer than this (from its header) is refused before it is decoded.
    var maximumSeconds = VoiceLimits.defaultMaximumSeconds
    /// The PocketSphinx model folder.
    var model = SpeechRecognizer.defaultModel
    /// Below this level (RMS of 16-bit samples) a recording is silence.
    var silenceLevel = VoiceLimits.defaultSilenceLevel

    init() {}

    /// From the chatbot's settings (validated by its schema before the worker starts).
    init(_ settings: JSONObject) {
        guard let voice = settings["voice"]?.objectValue else { return }
        maximumBytes = voice["max_bytes"]?.numberValue?.intValue ?? maximumBytes
        maximumSeconds = voice["max_seconds"]?.numberValue?.doubleValue ?? maximumSeconds
        model = voice["model"]?.stringValue ?? model
        silenceLevel = voice["silence_level"]?.numberValue?.doubleValue ?? silenceLevel
    }
}

/// The voice limits' defaults, for the settings schema and the supervisor's size check.
package enum VoiceLimits {
    /// 1 MiB, as HTTP's default `max_body_bytes`: 32 s of 16 kHz mono 16-bit.
    package static let defaultMaximumBytes = 1 << 20
    /// The largest `max_bytes`: the recording goes to the worker in one delivery frame, which
    /// carries at most ``FrameCodec/maxFrameLength`` (16 MiB); 1 MiB is left for the message's
    /// header (the processes' list, the context).
    package static let largestMaximumBytes = FrameCodec.maxFrameLength - (1 << 20)
    package static let defaultMaximumSeconds = 30.0
    package static let defaultSilenceLevel = 30.0
}
