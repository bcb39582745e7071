import Foundation

/// libpocketsphinx's functions, found with `dlopen` when the first voice message comes (in the
/// chatbot's worker only; the supervisor never loads it). Never closed: the decoder's memory
/// and the library live as long as the worker.
struct PocketSphinxLibrary: @unchecked Sendable {
    // @unchecked: C function pointers, immutable once found; the decoder using them is owned
    // by one thread (the chatbot's).
    typealias Decoder = OpaquePointer
    let psArgs: @convention(c) () -> OpaquePointer?
    let parseArguments: @convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, Int32) -> OpaquePointer?
    let initialise: @convention(c) (OpaquePointer?) -> Decoder?
    let setJSGF: @convention(c) (Decoder?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    let setSearch: @convention(c) (Decoder?, UnsafePointer<CChar>?) -> Int32
    let startUtterance: @convention(c) (Decoder?) -> Int32
    let processRaw: @convention(c) (Decoder?, UnsafePointer<Int16>?, Int, Int32, Int32) -> Int32
    let endUtterance: @convention(c) (Decoder?) -> Int32
    let hypothesis: @convention(c) (Decoder?, UnsafeMutablePointer<Int32>?) -> UnsafePointer<CChar>?
    let probability: @convention(c) (Decoder?) -> Int32
    let logmath: @convention(c) (Decoder?) -> OpaquePointer?
    let logmathExp: @convention(c) (OpaquePointer?, Int32) -> Double
    let lookupWord: @convention(c) (Decoder?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?

    /// The Debian packages that provide the library and the model.
    static let packages = "libpocketsphinx3 (or libpocketsphinx-dev) and pocketsphinx-en-us"

    /// The library, loaded once per process; the reason when it cannot be.
    static let shared: Result<PocketSphinxLibrary, SpeechError> = load()

    private static func load() -> Result<PocketSphinxLibrary, SpeechError> {
        let names = ["libpocketsphinx.so.3", "libpocketsphinx.so"]
        guard let handle = names.lazy.compactMap({ dlopen($0, RTLD_NOW | RTLD_LOCAL) }).first else {
            let reason = dlerror().map { String(cString: $0) } ?? "not found"
            return .failure(SpeechError(.unavailable, "speech recognition is not installed on this host (\(reason)); install the Debian packages \(packages): apt-get install libpocketsphinx3 pocketsphinx-en-us"))
        }
        // dlsym on the handle also searches its dependencies: cmd_ln_* and logmath_* are
        // sphinxbase's.
        var missing: [String] = []
        func symbol<T>(_ name: String, as type: T.Type) -> T? {
            guard let address = dlsym(handle, name) else { missing.append(name); return nil }
            return unsafeBitCast(address, to: type)
        }
        let library = PocketSphinxLibrary(
            psArgs: symbol("ps_args", as: (@convention(c) () -> OpaquePointer?).self) ?? { nil },
            parseArguments: symbol("cmd_ln_parse_r", as: (@convention(c) (OpaquePointer?, OpaquePointer?, Int32, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?, Int32) -> OpaquePointer?).self) ?? { _, _, _, _, _ in nil },
            initialise: symbol("ps_init", as: (@convention(c) (OpaquePointer?) -> Decoder?).self) ?? { _ in nil },
            setJSGF: symbol("ps_set_jsgf_string", as: (@convention(c) (Decoder?, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32).self) ?? { _, _, _ in -1 },
            setSearch: symbol("ps_set_search", as: (@convention(c) (Decoder?, UnsafePointer<CChar>?) -> Int32).self) ?? { _, _ in -1 },
            startUtterance: symbol("ps_start_utt", as: (@convention(c) (Decoder?) -> Int32).self) ?? { _ in -1 },
            processRaw: symbol("ps_process_raw", as: (@convention(c) (Decoder?, UnsafePointer<Int16>?, Int, Int32, Int32) -> Int32).self) ?? { _, _, _, _, _ in -1 },
            endUtterance: symbol("ps_end_utt", as: (@convention(c) (Decoder?) -> Int32).self) ?? { _ in -1 },
            hypothesis: symbol("ps_get_hyp", as: (@convention(c) (Decoder?, UnsafeMutablePointer<Int32>?) -> UnsafePointer<CChar>?).self) ?? { _, _ in nil },
            probability: symbol("ps_get_prob", as: (@convention(c) (Decoder?) -> Int32).self) ?? { _ in 0 },
            logmath: symbol("ps_get_logmath", as: (@convention(c) (Decoder?) -> OpaquePointer?).self) ?? { _ in nil },
            logmathExp: symbol("logmath_exp", as: (@convention(c) (OpaquePointer?, Int32) -> Double).self) ?? { _, _ in 0 },
            lookupWord: symbol("ps_lookup_word", as: (@convention(c) (Decoder?, UnsafePointer<CChar>?) -> UnsafeMutablePointer<CChar>?).self) ?? { _, _ in nil })
        guard missing.isEmpty else {
            return .failure(SpeechError(.unavailable, "the PocketSphinx library found lacks \(missing.joined(separator: ", ")): install Debian bookworm's \(packages) (0.8+5prealpha)"))
        }
        return .success(library)
    }
}
