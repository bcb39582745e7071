import Foundation

/// A PocketSphinx decoder with two searches: the grammar made from the adapters' examples
/// (fast and reliable for the commands the chatbot knows) and the free language model, which
/// decodes what the grammar does not match. Owned by the chatbot's thread.
final class SpeechRecognizer {
    /// What was heard.
    struct Transcript: Equatable {
        var text: String
        /// The decoder's posterior probability of the words (0…1): within the grammar it is
        /// often 1 (the grammar leaves one path); the language model's is lower and coarser.
        var confidence: Double
        /// `grammar` or `language_model`.
        var search: String
    }

    private let library: PocketSphinxLibrary
    private let decoder: PocketSphinxLibrary.Decoder
    /// Whether a grammar search was set up (some example can be spoken).
    let hasGrammar: Bool
    private static let grammarSearch = "commands"
    /// pocketsphinx's name for the search set up from `-lm`.
    private static let languageModelSearch = "_default"

    /// The model folder of Debian's pocketsphinx-en-us.
    static let defaultModel = "/usr/share/pocketsphinx/model/en-us"

    /// Loads the library (once per process) and the model (a second or two); `examples` make
    /// the grammar.
    init(model: String, examples: [String]) throws(SpeechError) {
        let library = try PocketSphinxLibrary.shared.get()
        self.library = library
        let files = ["-hmm": model + "/en-us", "-lm": model + "/en-us.lm.bin", "-dict": model + "/cmudict-en-us.dict"]
        for (_, path) in files where !FileManager.default.fileExists(atPath: path) {
            throw SpeechError(.unavailable, "the speech model file \(path) is missing; install the Debian package pocketsphinx-en-us or set the chatbot's voice.model to a folder with en-us/, en-us.lm.bin and cmudict-en-us.dict")
        }
        // -logfn /dev/null: the decoder's chatter would fill the process log on every message.
        var arguments = files.sorted { $0.key < $1.key }.flatMap { [$0.key, $0.value] } + ["-logfn", "/dev/null"]
        var pointers = arguments.indices.map { strdup(arguments[$0]) }
        defer { pointers.forEach { free($0) } }
        let config = pointers.withUnsafeMutableBufferPointer { library.parseArguments(nil, library.psArgs(), Int32($0.count), $0.baseAddress, 1) }
        guard let config, let decoder = library.initialise(config) else {
            throw SpeechError(.unavailable, "PocketSphinx could not load the model in \(model); reinstall pocketsphinx-en-us")
        }
        arguments.removeAll()
        self.decoder = decoder
        let grammar = SpeechGrammar.jsgf(examples: examples) { [library] word in
            guard let phones = library.lookupWord(decoder, word) else { return false }
            free(phones)
            return true
        }
        hasGrammar = grammar.map { text in library.setJSGF(decoder, Self.grammarSearch, text) == 0 } ?? false
    }

    /// The words in `samples` (16 kHz mono): the grammar's match, else the language model's;
    /// nil when neither hears any word.
    /// Throws once `deadline` (CLOCK_MONOTONIC seconds) passes: the sender has stopped waiting,
    /// and minutes of audio held the chatbot, every other chat failing meanwhile.
    func recognise(_ samples: [Int16], until deadline: Double = .infinity) throws(SpeechError) -> Transcript? {
        if hasGrammar, let found = try decode(samples, search: Self.grammarSearch, until: deadline) { return found }
        return try decode(samples, search: Self.languageModelSearch, until: deadline)
    }

    /// Samples given to the decoder at a time, between two looks at the deadline: half a second.
    static let chunkSamples = 8_000
    /// Recordings up to this many samples (10 s) are decoded in one call, as a whole utterance
    /// (normalised over all of it: the most accurate); longer ones in chunks.
    static let wholeUtteranceSamples = 160_000

    /// One decode of the utterance with `search`: a short one whole, a longer one fed in chunks
    /// of ``chunkSamples`` with a look at `deadline` between them.
    func decode(_ samples: [Int16], search: String, until deadline: Double = .infinity) throws(SpeechError) -> Transcript? {
        try Self.requireTime(before: deadline, heard: 0)
        guard library.setSearch(decoder, search) == 0, library.startUtterance(decoder) == 0 else { return nil }
        if samples.count <= Self.wholeUtteranceSamples {
            _ = samples.withUnsafeBufferPointer { library.processRaw(decoder, $0.baseAddress, $0.count, 0, 1) }
        } else {
            var start = 0
            while start < samples.count {
                do throws(SpeechError) {
                    try Self.requireTime(before: deadline, heard: start)
                } catch {
                    _ = library.endUtterance(decoder)
                    throw error
                }
                let end = min(start + Self.chunkSamples, samples.count)
                _ = samples[start..<end].withUnsafeBufferPointer { library.processRaw(decoder, $0.baseAddress, $0.count, 0, 0) }
                start = end
            }
        }
        _ = library.endUtterance(decoder)
        var score: Int32 = 0
        guard let hypothesis = library.hypothesis(decoder, &score) else { return nil }
        // Fillers (<sil>, [noise]) are not words.
        let words = String(cString: hypothesis).split(separator: " ").filter { !$0.hasPrefix("<") && !$0.hasPrefix("[") && !$0.hasPrefix("+") }
        guard !words.isEmpty else { return nil }
        let probability = library.logmathExp(library.logmath(decoder), library.probability(decoder))
        let confidence = probability.isFinite ? min(1, max(0, probability)) : 0
        return Transcript(text: words.joined(separator: " "), confidence: (confidence * 1000).rounded() / 1000,
                          search: search == Self.grammarSearch ? "grammar" : "language_model")
    }

    /// Throws when `deadline` has passed, `heard` samples into the recording.
    private static func requireTime(before deadline: Double, heard: Int) throws(SpeechError) {
        guard ProgramChatAdapter.now() >= deadline else { return }
        throw SpeechError(.timedOut, "the recognition of the recording was given up \(heard > 0 ? "\(String(format: "%.1f", Double(heard) / 16_000)) s into its audio" : "before its last search"): its sender had stopped waiting; send a shorter recording")
    }
}
