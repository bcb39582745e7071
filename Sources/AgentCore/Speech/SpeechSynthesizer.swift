import Foundation

/// Speaks a reply with libespeak-ng, found with `dlopen` in the chatbot's worker like
/// PocketSphinx. The library rather than the `espeak-ng` program: no process to start, wait
/// for and contain per reply (the program loads its voice data each time), and a failure is a
/// return code instead of an exit status on a pipe. espeak-ng keeps global state: one
/// synthesizer per process, used by the chatbot's one thread.
final class SpeechSynthesizer: @unchecked Sendable {
    // @unchecked: immutable once made; espeak-ng's own state is global and only the chatbot's
    // one thread speaks (agent-bench: its main thread).
    private typealias Callback = @convention(c) (UnsafeMutablePointer<Int16>?, Int32, UnsafeMutableRawPointer?) -> Int32
    private let synth: @convention(c) (UnsafeRawPointer?, Int, UInt32, Int32, UInt32, UInt32, UnsafeMutablePointer<UInt32>?, UnsafeMutableRawPointer?) -> Int32
    private let synchronize: @convention(c) () -> Int32
    /// Samples per second of what espeak-ng makes (22050).
    let sampleRate: Int

    /// The Debian package that provides the library.
    static let package = "libespeak-ng1 (or libespeak-ng-dev)"

    /// The synthesizer of this process, made at the first spoken reply.
    static let shared: Result<SpeechSynthesizer, SpeechError> = Result { () throws(SpeechError) in try SpeechSynthesizer(voice: "en") }

    private init(voice: String) throws(SpeechError) {
        let names: [String] = ["libespeak-ng.so.1", "libespeak-ng.so"]
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            throw SpeechError(.unavailable, "speech synthesis is not installed on this host; install the Debian package \(Self.package): apt-get install libespeak-ng1")
        }
        guard let initialize = dlsym(handle, "espeak_Initialize"), let setCallback = dlsym(handle, "espeak_SetSynthCallback"),
              let setVoice = dlsym(handle, "espeak_SetVoiceByName"), let synth = dlsym(handle, "espeak_Synth"),
              let synchronize = dlsym(handle, "espeak_Synchronize") else {
            throw SpeechError(.unavailable, "the espeak-ng library found lacks its synthesis functions; install \(Self.package)")
        }
        // AUDIO_OUTPUT_SYNCHRONOUS (2): espeak_Synth returns once every sample went to the callback.
        let rate = unsafeBitCast(initialize, to: (@convention(c) (Int32, Int32, UnsafePointer<CChar>?, Int32) -> Int32).self)(2, 0, nil, 0)
        guard rate > 0 else { throw SpeechError(.unavailable, "espeak-ng did not start (its data in espeak-ng-data is missing?); reinstall \(Self.package)") }
        let callback: Callback = { samples, count, _ in
            if let samples, count > 0 { SpeechSynthesizer.spoken.withLock { $0.append(contentsOf: UnsafeBufferPointer(start: samples, count: Int(count))) } }
            return 0
        }
        unsafeBitCast(setCallback, to: (@convention(c) (Callback?) -> Void).self)(callback)
        guard unsafeBitCast(setVoice, to: (@convention(c) (UnsafePointer<CChar>?) -> Int32).self)(voice) == 0 else {
            throw SpeechError(.unavailable, "espeak-ng has no voice \"\(voice)\"; reinstall \(Self.package)")
        }
        self.synth = unsafeBitCast(synth, to: type(of: self.synth))
        self.synchronize = unsafeBitCast(synchronize, to: type(of: self.synchronize))
        sampleRate = Int(rate)
    }

    /// Where the callback puts the samples of the text being spoken.
    private static let spoken = Guarded<[Int16]>([])

    /// `text` spoken, as a 16-bit mono WAV file.
    func speak(_ text: String) throws(SpeechError) -> [UInt8] {
        Self.spoken.withLock { $0.removeAll(keepingCapacity: true) }
        // POS_CHARACTER (1), espeakCHARS_UTF8 (1); the text with its NUL.
        let status = text.withCString { synth($0, strlen($0) + 1, 0, 1, 0, 1, nil, nil) }
        _ = synchronize()
        let samples = Self.spoken.withLock { $0 }
        guard status == 0 else { throw SpeechError(.unavailable, "espeak-ng could not speak the reply (error \(status))") }
        return WAVAudio.file(samples: samples, rate: sampleRate)
    }
}
