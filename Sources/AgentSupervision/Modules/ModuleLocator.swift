import AgentBase
import AgentCore
import AgentLoop
import CAgentSystem
import Foundation
import JSONSchema

/// Where an enabled module's library is, and whether it is built from source in the agent.
public struct ModuleLocation: Sendable, Equatable {
    /// The name as enabled in settings.
    public var name: String
    /// The shared library to load.
    public var library: String
    /// The module's source folder (`modules/<name>`) when the agent builds it, else nil.
    public var sourceDirectory: String?
    /// A `jsonl/1` module's manifest (`library` is then its `module.json`), read as data when
    /// the module was located; nil for a library, which a describe worker loads.
    public var programManifest: ModuleManifest? = nil
}

/// Finds module libraries for `enabled_modules` entries and rebuilds stale ones.
///
/// A name resolves, in order, to: the agent's own `modules/<name>/` (built by the agent's
/// Package.swift into `.build/<configuration>/lib<name>.so`); `lib<name>.so` in a folder of
/// `AGENT_MODULE_PATH` (colon-separated); `lib<name>.so` next to the `agent-control` binary
/// (the runtime's own modules). An entry containing `/` or ending in `.so` is a path, relative
/// to the agent's folder.
public struct ModuleLocator: Sendable {
    public var agentDirectory: String
    /// `debug` or `release`: which build of the agent's own modules to use.
    public var configuration: String
    public var searchPath: [String]
    public var runtimeDirectory: String?
    /// Variables a module build (whose package manifest is code) does not get: the agent's
    /// secrets (``SecretVariables``).
    public var withheld: Set<String> = SecretVariables.conventional

    public init(agentDirectory: String, configuration: String, searchPath: [String], runtimeDirectory: String?) {
        self.agentDirectory = agentDirectory
        self.configuration = configuration
        self.searchPath = searchPath
        self.runtimeDirectory = runtimeDirectory
    }

    /// Locates every module it can; returns what it found and what it could not find.
    public func locateAll(_ names: [String]) -> (found: [ModuleLocation], errors: [ModuleLoadError]) {
        var found: [ModuleLocation] = []
        var errors: [ModuleLoadError] = []
        for name in names {
            do { found.append(try locate(name)) } catch { errors.append(error) }
        }
        return (found, errors)
    }

    /// Whether an `enabled_modules` entry is a path to a library rather than a name.
    public static func isPath(_ entry: String) -> Bool {
        entry.contains("/") || entry.hasSuffix(".so")
    }

    public func locate(_ entry: String) throws(ModuleLoadError) -> ModuleLocation {
        if Self.isPath(entry) {
            let path = entry.hasPrefix("/") ? entry : agentDirectory + "/" + entry
            let file = URL(fileURLWithPath: path).lastPathComponent
            var name = file.hasPrefix("lib") ? String(file.dropFirst(3)) : file
            if name.hasSuffix(".so") { name = String(name.dropLast(3)) }
            return ModuleLocation(name: name, library: URL(fileURLWithPath: path).standardizedFileURL.path, sourceDirectory: nil)
        }
        if let problem = PlainName.problem(entry, what: "module name") {
            throw ModuleLoadError(.notFound, module: entry, file: entry, problem)
        }
        let fileName = "lib\(entry).so"
        let source = agentDirectory + "/modules/" + entry
        if let program = try programModule(entry, in: agentDirectory + "/modules") { return program }
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: source, isDirectory: &isDirectory), isDirectory.boolValue {
            return ModuleLocation(name: entry, library: "\(agentDirectory)/.build/\(configuration)/\(fileName)", sourceDirectory: source)
        }
        var looked = ["\(source)/ (no such folder)"]
        for directory in searchPath + [runtimeDirectory].compactMap({ $0 }) {
            if let program = try programModule(entry, in: directory) { return program }
            let candidate = directory + "/" + fileName
            if FileManager.default.fileExists(atPath: candidate) {
                return ModuleLocation(name: entry, library: candidate, sourceDirectory: nil)
            }
            looked.append(candidate)
        }
        if let close = Suggestions.closest(to: entry, among: availableNames()) {
            throw ModuleLoadError(.notFound, module: entry, file: fileName,
                                  "module not found; did you mean \"\(close)\"? (looked in: \(looked.joined(separator: ", ")))")
        }
        throw ModuleLoadError(.notFound, module: entry, file: fileName,
                              "module not found; looked in: \(looked.joined(separator: ", ")). Create it with `add-agent-module \(entry)`, or add its folder to AGENT_MODULE_PATH.")
    }

    /// `folder/<name>/module.json`, a `jsonl/1` module, with its manifest read (a broken
    /// manifest is this module's error); nil when there is no such file.
    private func programModule(_ name: String, in folder: String) throws(ModuleLoadError) -> ModuleLocation? {
        let file = "\(folder)/\(name)/\(ModuleManifest.programManifestName)"
        var info = stat()
        guard lstat(file, &info) == 0 else { return nil }
        let manifest = try ModuleManifest(programManifest: file, module: name)
        let problems = manifest.commandProblems + Self.hostKeyProblems(manifest)
        guard problems.isEmpty else {
            throw ModuleLoadError(.invalidManifest, module: name, file: file, "the manifest is invalid: " + problems.joined(separator: "; ") + "; fix \(file)")
        }
        return ModuleLocation(name: name, library: URL(fileURLWithPath: file).standardizedFileURL.path, sourceDirectory: nil, programManifest: manifest)
    }

    /// A program module's settings declaring a key the runtime takes for itself (`restart`,
    /// `type`…): the runtime removes it before the module's schema sees the settings, so such
    /// a setting could never be given (`subscribe` is one a module may read).
    static func hostKeyProblems(_ manifest: ModuleManifest) -> [String] {
        let reserved = ProcessSettings.hostKeys.filter { $0 != "subscribe" }
        return manifest.processes.flatMap { type in
            (type.settingsSchema["properties"]?.objectValue?.keys.filter { reserved.contains($0) } ?? []).map { key in
                "/process_types/\(JSONPointer.escape(type.type))/settings/properties/\(JSONPointer.escape(key)): expected a setting the runtime does not take for itself (\(reserved.joined(separator: ", "))), found \"\(key)\""
            }
        }
    }

    /// Every module name this locator would find: the agent's `modules/` folders and the
    /// `lib<name>.so` files of the search path and the runtime's folder.
    public func availableNames() -> [String] {
        var names: [String] = []
        let files = FileManager.default
        for folder in (try? files.contentsOfDirectory(atPath: agentDirectory + "/modules")) ?? [] {
            var isDirectory: ObjCBool = false
            if files.fileExists(atPath: agentDirectory + "/modules/" + folder, isDirectory: &isDirectory), isDirectory.boolValue {
                names.append(folder)
            }
        }
        for directory in searchPath + [runtimeDirectory].compactMap({ $0 }) {
            for file in (try? files.contentsOfDirectory(atPath: directory)) ?? [] where file.hasPrefix("lib") && file.hasSuffix(".so") {
                let name = String(file.dropFirst(3).dropLast(3))
                if !name.isEmpty, !names.contains(name) { names.append(name) }
            }
            for folder in (try? files.contentsOfDirectory(atPath: directory)) ?? []
            where !names.contains(folder) && files.fileExists(atPath: "\(directory)/\(folder)/\(ModuleManifest.programManifestName)") {
                names.append(folder)
            }
        }
        return names
    }

    // MARK: Building

    /// Whether the library is missing or older than a source file of the module (or of the
    /// SDK, when the agent contains it).
    public func isStale(_ location: ModuleLocation) -> Bool {
        guard let source = location.sourceDirectory else { return false }
        guard let built = Self.modificationTime(location.library) else { return true }
        // The module folder's own time is left out: it changes when anything is added beside
        // the sources (a `.agent/` folder written by running the module's settings template in
        // place, an editor's file), which is no reason to rebuild.
        if Self.newestModification(under: source, countingRoot: false) ?? 0 > built { return true }
        // Every target of the SDK (its C ones too) and its manifest.
        let roots = [agentDirectory + "/Package.swift", agentDirectory + "/SDK/Package.swift", agentDirectory + "/SDK/Sources"]
        return roots.contains { Self.newestModification(under: $0) ?? 0 > built }
    }

    package static func modificationTime(_ path: String) -> Double? {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        return Double(info.st_mtim.tv_sec) + Double(info.st_mtim.tv_nsec) / 1e9
    }

    /// The newest modification time of `root` and what it contains. Hidden entries (`.build`,
    /// `.agent`, `.swiftpm`, editors' swap files) are skipped: SwiftPM does not compile them,
    /// and the runtime writes its own state into `.agent/`.
    package static func newestModification(under root: String, countingRoot: Bool = true) -> Double? {
        guard let rootTime = modificationTime(root) else { return nil }
        var newest = countingRoot ? rootTime : 0
        guard let walker = FileManager.default.enumerator(atPath: root) else { return newest }
        while let relative = walker.nextObject() as? String {
            if URL(fileURLWithPath: relative).lastPathComponent.hasPrefix(".") { walker.skipDescendants(); continue }
            if let time = modificationTime(root + "/" + relative) { newest = max(newest, time) }
        }
        return newest
    }

    /// Builds the modules that are stale with `swift build --product <name>`, showing the
    /// compiler's output. Throws the first failure.
    /// With `stopSignals`, a SIGINT or SIGTERM stops the build (SIGTERM to it) and returns
    /// without building the rest: the caller looks at `stopSignals.received`.
    public func buildStale(_ locations: [ModuleLocation], stopSignals: StopSignals? = nil, log: (String) -> Void) throws(ModuleLoadError) {
        for location in locations where isStale(location) {
            if stopSignals?.check() == true { return }
            log("building module \(location.name) (swift build --product \(location.name) -c \(configuration))")
            let status = Self.run(["swift", "build", "--package-path", agentDirectory, "--product", location.name, "-c", configuration],
                                  withholding: withheld, stopSignals: stopSignals)
            if stopSignals?.received != nil { return }
            guard status == 0 else {
                throw ModuleLoadError(.buildFailed, module: location.name, file: location.library,
                                      "`swift build --product \(location.name)` failed (exit status \(status)); fix the errors above, or pass --no-build to use the last build")
            }
            // A build that found nothing to do does not relink, and the library would stay
            // older than a file that changed without changing the product (Package.swift, a
            // comment): built now, so it is as new as its sources, or it is rebuilt every run.
            if isStale(location) { _ = utimensat(AT_FDCWD, location.library, nil, 0) }
        }
    }

    /// Runs a command with its output on this process's stderr (never stdout, which carries
    /// `console --json`'s events) and waits for it; returns its exit status.
    package static func run(_ command: [String], withholding withheld: Set<String> = [], stopSignals: StopSignals? = nil) -> Int32 {
        let swift = ProcessInfo.processInfo.environment["SWIFT_EXEC_PATH"] ?? Self.which(command[0]) ?? command[0]
        var arguments = command
        arguments[0] = swift
        let environment = SecretVariables.withholding(withheld, from: ProcessInfo.processInfo.environment)
        let result = ProcessSpawner.spawn(path: swift, arguments: arguments, environment: environment,
                                          stdout: 2, stderr: 2, channel: -1, newGroup: false)
        guard case .success(let pid) = result else { return 127 }
        var status: Int32 = 0
        if let stopSignals {
            // Polled: the wait ends at the build's exit or at a stop signal, which stops it.
            while waitpid(pid, &status, WNOHANG) == 0 {
                if stopSignals.wait(seconds: 0.1) {
                    kill(pid, SIGTERM)
                    break
                }
            }
        }
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        return ProcessSpawner.exitCode(status) ?? 128 + ProcessSpawner.termSignal(status)
    }

    package static func which(_ program: String) -> String? {
        for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
            let candidate = "\(directory)/\(program)"
            if access(candidate, X_OK) == 0 { return candidate }
        }
        return nil
    }
}

/// Several modules that could not be found or loaded.
public struct ModuleErrors: Error, CustomStringConvertible, Sendable {
    public var errors: [ModuleLoadError]
    public init(_ errors: [ModuleLoadError]) { self.errors = errors }
    public var description: String { errors.map(\.description).joined(separator: "\n") }
}
