import Foundation

/// Where the runtime's templates and SDK are: the source checkout (found from a build tree),
/// an installed copy (`<prefix>/share/agentruntime`), or `AGENT_RUNTIME_HOME`.
public struct RuntimeHome: Sendable, Equatable {
    /// A folder holding `Templates/` and `SDK/`.
    public var path: String

    public var templates: String { path + "/Templates" }
    /// The SDK package that agents depend on.
    public var sdk: String { path + "/SDK" }

    public init(path: String) { self.path = path }

    /// Finds the home: `AGENT_RUNTIME_HOME`, else the folders above the running executable
    /// (a build tree: `<checkout>/.build/<triple>/debug/create-agent`), else
    /// `<prefix>/share/agentruntime` next to an installed `<prefix>/bin` or above an installed
    /// `<prefix>/lib/agentruntime`.
    public static func locate(environment: [String: String] = ProcessInfo.processInfo.environment,
                              executable: String = RuntimeHome.executablePath) throws(ScaffoldingError) -> RuntimeHome {
        if let explicit = environment["AGENT_RUNTIME_HOME"] {
            let home = RuntimeHome(path: URL(fileURLWithPath: explicit).standardizedFileURL.path)
            guard home.isComplete else {
                throw ScaffoldingError("runtime_home", "AGENT_RUNTIME_HOME=\(explicit) has no Templates/ and SDK/; point it at the AgentRuntime checkout or at <prefix>/share/agentruntime")
            }
            return home
        }
        var folder = URL(fileURLWithPath: executable).deletingLastPathComponent()
        // `<prefix>/bin/create-agent` (scripts/install.sh) or `<prefix>/lib/agentruntime/create-agent`
        // (the Debian package, with a symlink in /usr/bin).
        for prefix in [folder.deletingLastPathComponent(), folder.deletingLastPathComponent().deletingLastPathComponent()] {
            let installed = RuntimeHome(path: prefix.appendingPathComponent("share/agentruntime").path)
            if installed.isComplete { return installed }
        }
        while folder.path != "/" {
            let candidate = RuntimeHome(path: folder.path)
            if candidate.isComplete { return candidate }
            folder.deleteLastPathComponent()
        }
        throw ScaffoldingError("runtime_home", "cannot find the runtime's Templates/ and SDK/ above \(executable) or in ../share/agentruntime; set AGENT_RUNTIME_HOME to the AgentRuntime checkout")
    }

    var isComplete: Bool {
        FileManager.default.fileExists(atPath: templates + "/agent") && FileManager.default.fileExists(atPath: sdk + "/Package.swift")
    }

    public static var executablePath: String {
        (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
    }
}

extension RuntimeHome {
    /// Where the runtime's executables are, for the hints printed after scaffolding.
    public var binaries: String {
        let running = URL(fileURLWithPath: Self.executablePath).deletingLastPathComponent().path
        return FileManager.default.isExecutableFile(atPath: running + "/agent-control") ? running : path + "/.build/debug"
    }
}
