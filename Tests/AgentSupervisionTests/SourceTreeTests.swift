@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Testing

/// What the runtime writes next to an agent never makes its modules look stale, and tests
/// never write into the source tree.
@Suite(.ownThreads) struct SourceTreeTests {
    private static func setTime(_ path: String, secondsAgo: Double) {
        let time = Date().timeIntervalSince1970 - secondsAgo
        var times = [timespec(tv_sec: Int(time), tv_nsec: 0), timespec(tv_sec: Int(time), tv_nsec: 0)]
        _ = utimensat(AT_FDCWD, path, &times, 0)
    }

    /// Validating a module's settings template in place writes `modules/<name>/.agent/`; that
    /// must not make the module newer than its library (which made every later start rebuild).
    @Test func validatingAModuleTemplateInPlaceDoesNotMakeTheModuleStale() throws {
        let agent = TestPaths.temporaryDirectory("stale")
        let module = agent + "/modules/ticker"
        try FileManager.default.createDirectory(atPath: module + "/Sources", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: agent + "/.build/debug", withIntermediateDirectories: true)
        try "// source".write(toFile: module + "/Sources/Ticker.swift", atomically: true, encoding: .utf8)
        let library = try CModuleFixture.module("ticker", manifest: CModuleFixture.validManifest.replacingOccurrences(of: "cmod", with: "ticker"))
        try FileManager.default.copyItem(atPath: library, toPath: agent + "/.build/debug/libticker.so")
        try #"{"enabled_modules": ["\#(library)"], "processes": {}}"#.write(toFile: module + "/settings_template.json", atomically: true, encoding: .utf8)
        for path in [module + "/Sources/Ticker.swift", module + "/Sources", module + "/settings_template.json", module] {
            Self.setTime(path, secondsAgo: 100)
        }
        Self.setTime(agent + "/.build/debug/libticker.so", secondsAgo: 50)
        let locator = ModuleLocator(agentDirectory: agent, configuration: "debug", searchPath: [], runtimeDirectory: nil)
        let location = try locator.locate("ticker")
        #expect(!locator.isStale(location))

        let result = try runProgram("validate-settings", ["--settings", module + "/settings_template.json"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(FileManager.default.fileExists(atPath: module + "/.agent/cache/manifests.json"))
        #expect(!locator.isStale(location), "the runtime's own .agent/ folder made the module look stale")

        // A changed source still does.
        Self.setTime(module + "/Sources/Ticker.swift", secondsAgo: 0)
        #expect(locator.isStale(location))
    }

    /// A build that had nothing to relink (Package.swift or a comment changed) leaves the
    /// library older than its sources: it must count as fresh, not be rebuilt on every run.
    @Test func aModuleBuiltOnceIsNotRebuiltOnTheNextRun() throws {
        let agent = TestPaths.temporaryDirectory("rebuild")
        let module = agent + "/modules/ticker"
        try FileManager.default.createDirectory(atPath: module + "/Sources", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: agent + "/.build/debug", withIntermediateDirectories: true)
        try "// source".write(toFile: module + "/Sources/Ticker.swift", atomically: true, encoding: .utf8)
        let library = try CModuleFixture.module("ticker", manifest: CModuleFixture.validManifest.replacingOccurrences(of: "cmod", with: "ticker"))
        try FileManager.default.copyItem(atPath: library, toPath: agent + "/.build/debug/libticker.so")
        Self.setTime(agent + "/.build/debug/libticker.so", secondsAgo: 100)
        // A stand-in for swift that succeeds without relinking, and counts its runs.
        let swift = agent + "/fake-swift"
        try "#!/bin/sh\necho built >> \(agent)/builds.txt\n".write(toFile: swift, atomically: true, encoding: .utf8)
        chmod(swift, 0o755)
        try #"{"enabled_modules": ["ticker"], "processes": {}}"#.write(toFile: agent + "/settings.json", atomically: true, encoding: .utf8)
        for _ in 0..<2 {
            let result = try runProgram("validate-settings", [], in: agent, environment: ["SWIFT_EXEC_PATH": swift])
            #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        }
        let builds = (try? String(contentsOfFile: agent + "/builds.txt", encoding: .utf8)) ?? ""
        #expect(builds == "built\n", "swift build ran \(builds.split(separator: "\n").count) times")
    }

    /// The test helpers refuse to run an agent whose settings (or working folder) are in the
    /// repository, so that no test can write `.agent/` into the source tree.
    @Test func testHelpersRefuseToRunAnAgentInTheSourceTree() throws {
        #expect(throws: TestPaths.SourceTreeError.self) {
            try runProgram("validate-settings", ["--settings", TestPaths.repository + "/modules/sample/settings_template.json", "--no-build"])
        }
        #expect(throws: TestPaths.SourceTreeError.self) {
            try runProgram("validate-settings", ["--no-build"], in: TestPaths.repository)
        }
        #expect(throws: TestPaths.SourceTreeError.self) {
            try AgentRun(settings: "{}", directory: TestPaths.repository + "/modules/sample")
        }
    }
}
