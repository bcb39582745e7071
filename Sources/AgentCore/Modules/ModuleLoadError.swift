/// A module that could not be loaded, and why: names the module and the file, and says how
/// to fix it.
public struct ModuleLoadError: Error, CustomStringConvertible, Equatable, Sendable {
    /// What went wrong, as a stable code (for scripts and tests).
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        public static let notFound = Code(rawValue: "module_not_found")
        public static let notAFile = Code(rawValue: "not_a_file")
        public static let notELF = Code(rawValue: "not_elf")
        public static let wrongArchitecture = Code(rawValue: "wrong_architecture")
        public static let loadFailed = Code(rawValue: "dlopen_failed")
        public static let missingEntry = Code(rawValue: "missing_entry_symbol")
        public static let abiMismatch = Code(rawValue: "abi_version_mismatch")
        public static let invalidManifest = Code(rawValue: "invalid_manifest")
        public static let nameMismatch = Code(rawValue: "module_name_mismatch")
        public static let buildFailed = Code(rawValue: "build_failed")
        public static let workerFailed = Code(rawValue: "worker_failed")
    }

    public var code: Code
    /// The module's name as enabled in settings (or the file's name).
    public var module: String
    /// The shared library's path.
    public var file: String
    /// What is wrong and how to fix it.
    public var message: String

    public init(_ code: Code, module: String, file: String, _ message: String) {
        self.code = code
        self.module = module
        self.file = file
        self.message = message
    }

    public var description: String { "module \"\(module)\" (\(file)): \(message)" }
}
