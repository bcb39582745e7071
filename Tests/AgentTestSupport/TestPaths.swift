import CAgentTestSupport
import Foundation

/// Where the test finds the repository, the built binaries and the C header.
package enum TestPaths {
    /// The repository root (two levels above this file's folder).
    package static let repository: String = {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().path
    }()

    /// The folder holding the test bundle: `.build/<triple>/debug`, where `swift build` put
    /// agent-control, agent-worker and the module libraries — or `AGENT_TEST_PRODUCTS`, to run
    /// the end-to-end tests against other binaries (an older build, to see a new test fail).
    package static let products: String = {
        if let other = ProcessInfo.processInfo.environment["AGENT_TEST_PRODUCTS"], !other.isEmpty { return other }
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        var url = URL(fileURLWithPath: exe).deletingLastPathComponent()
        while !FileManager.default.fileExists(atPath: url.appendingPathComponent("agent-worker").path), url.path != "/" {
            url.deleteLastPathComponent()
        }
        return url.path
    }()

    package static let abiInclude = repository + "/SDK/Sources/AgentModuleABI/include"

    /// Where temporary folders go: TMPDIR as `CAgentTestSupport` chose it before the first test
    /// (the system's, or another when programs may not run from it).
    package static let temporaryRoot: String = {
        let root = agent_test_temporary_root().map { String(cString: $0) } ?? NSTemporaryDirectory()
        return root.hasSuffix("/") && root.count > 1 ? String(root.dropLast()) : root
    }()

    /// A new empty temporary folder, removed with everything in it when the test process exits
    /// (see ``TemporaryFolders``).
    package static func temporaryDirectory(_ label: String) -> String {
        let path = temporaryRoot + "/agent-tests-\(label)-\(UUID().uuidString.prefix(8))"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        TemporaryFolders.removeAtExit(path)
        return path
    }

    /// Tests never run an agent in the source tree: its settings' folder gets `.agent/` (the
    /// manifest cache, logs, the store), and a module folder that gains files looks newer than
    /// its library. Throws when `path` (a settings file or a working folder) is inside the
    /// repository.
    package static func requireOutsideSourceTree(_ path: String) throws {
        let absolute = URL(fileURLWithPath: path).standardizedFileURL.resolvingSymlinksInPath().path
        let root = URL(fileURLWithPath: repository).resolvingSymlinksInPath().path
        if absolute == root || absolute.hasPrefix(root + "/") {
            throw SourceTreeError(path: absolute)
        }
    }

    package struct SourceTreeError: Error, CustomStringConvertible {
        package var path: String
        package var description: String { "\(path) is in the source tree; tests must run agents in temporary folders (copy the file there)" }
    }
}
