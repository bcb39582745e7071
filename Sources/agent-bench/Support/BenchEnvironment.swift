import AgentCore
import AgentRuntime
import Foundation

/// Where the binaries under test are, and a scratch folder for generated agents and logs.
struct BenchEnvironment {
    /// The folder of agent-bench; agent-control, agent-worker and the module libraries are
    /// built into the same one.
    let binDirectory: String
    let selfPath: String
    let scratch: String
    /// The package the binaries were built from, if found (for the commit).
    let packageDirectory: String?
    let quick: Bool

    var agentControl: String { binDirectory + "/agent-control" }
    var agentWorker: String { binDirectory + "/agent-worker" }
    func library(_ module: String) -> String { "\(binDirectory)/lib\(module).so" }

    /// Modules the repository ships, whose libraries the bench loads.
    static let shippedModules = ["system", "sample", "bench"]

    struct MissingBinaries: Error, CustomStringConvertible {
        var missing: [String]
        var description: String {
            "missing next to agent-bench: \(missing.joined(separator: ", ")). Build everything first: `swift build -c release && .build/release/agent-bench`"
        }
    }

    /// `selfPath`: the agent-bench whose child modes the figures run (nil: this program; tests,
    /// which are not agent-bench, name the one built beside them).
    init(quick: Bool, selfPath: String? = nil) throws {
        self.quick = quick
        let bin = AgentLauncher.runtimeDirectory
        binDirectory = bin
        self.selfPath = selfPath ?? (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var missing = [bin + "/agent-control", bin + "/agent-worker"] + Self.shippedModules.map { "\(bin)/lib\($0).so" }
        missing.removeAll { FileManager.default.isExecutableFile(atPath: $0) || FileManager.default.fileExists(atPath: $0) }
        if !missing.isEmpty { throw MissingBinaries(missing: missing.map { URL(fileURLWithPath: $0).lastPathComponent }) }

        var template = Array((NSTemporaryDirectory() + "/agent-bench.XXXXXX").utf8CString)
        guard let made = mkdtemp(&template) else { throw POSIXError(.EIO) }
        scratch = String(cString: made)

        var directory = URL(fileURLWithPath: bin)
        var found: String?
        for _ in 0..<5 {
            directory.deleteLastPathComponent()
            if FileManager.default.fileExists(atPath: directory.path + "/Package.swift") {
                found = directory.path
                break
            }
        }
        packageDirectory = found
    }

    /// A new folder under the scratch folder.
    func folder(_ name: String) -> String {
        let path = scratch + "/" + name
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Writes an agent's settings into a new folder and returns the settings file.
    func writeAgent(_ name: String, settings: String) throws -> String {
        let file = folder(name) + "/settings.json"
        try settings.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    func removeScratch() { try? FileManager.default.removeItem(atPath: scratch) }

    /// Runs `body` (which spawns a child that inherits the limit) with the soft limit on open
    /// files lowered to `soft`, then restores it.
    static func withOpenFileLimit<T>(_ soft: UInt64, _ body: () throws -> T) rethrows -> T {
        var saved = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        var lowered = saved
        lowered.rlim_cur = rlim_t(min(soft, UInt64(saved.rlim_max)))
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered)
        defer { setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) }
        return try body()
    }

    /// The soft limit on open files of a running process, from /proc/PID/limits.
    static func openFileLimit(of pid: Int32) -> UInt64? {
        guard let text = ProcFiles.read("/proc/\(pid)/limits") else { return nil }
        for line in text.split(separator: "\n") where line.hasPrefix("Max open files") {
            return line.dropFirst("Max open files".count).split(separator: " ").first.flatMap { UInt64($0) }
        }
        return nil
    }

    /// Raises the soft limit on open files to the hard limit (children inherit it) and
    /// returns both.
    @discardableResult
    static func raiseOpenFileLimit() -> (before: UInt64, after: UInt64) {
        var limit = rlimit()
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        let before = UInt64(limit.rlim_cur)
        limit.rlim_cur = limit.rlim_max
        setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
        return (before, UInt64(limit.rlim_cur))
    }
}
