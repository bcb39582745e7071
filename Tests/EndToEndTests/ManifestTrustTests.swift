import AgentCore
import AgentTestSupport
import Foundation
import Testing

/// A module's manifest, and the cache that remembers manifests, are untrusted input: whatever
/// the supervisor parses or compiles from them fails as an error naming the module (or the
/// cache entry), never as a crash of the supervisor or of the tools.
@Suite(.ownThreads, .serialized) struct ManifestTrustTests {
    /// A back-reference of 20 digits: it once overflowed the regex translator.
    static let overflowingPattern = #"\\99999999999999999999"#

    /// A C module whose one process type, `picky`, has a settings schema with `pattern`.
    static func module(_ name: String, pattern: String) throws -> String {
        let manifest = #"{"name":"\#(name)","version":"1.0.0","processes":[{"type":"picky","kind":"datasource","settings_schema":{"type":"object","properties":{"code":{"type":"string","pattern":"\#(pattern)"}}}}]}"#
        return try CModuleFixture.module(name, manifest: manifest)
    }

    static func settingsFile(_ text: String) throws -> String {
        let file = TestPaths.temporaryDirectory("trust") + "/settings.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func manifestWithAnUncompilableSchemaIsAnErrorNamingTheModule() throws {
        let manifest = #"{"name":"m","version":"1","processes":[{"type":"t","kind":"datasource","settings_schema":{"properties":{"x":{"pattern":"\#(Self.overflowingPattern)"}}}}]}"#
        let error = #expect(throws: ModuleLoadError.self) { try ModuleManifest(json: manifest, module: "m", file: "/lib/libm.so") }
        #expect(error?.code == .invalidManifest)
        #expect(error?.description.contains(#"module "m" (/lib/libm.so)"#) == true)
        #expect(error?.message.contains(#"/processes/0/settings_schema/properties/x/pattern: the settings schema of "t" does not compile"#) == true, "\(String(describing: error))")
        #expect(error?.message.contains(#"backreference \99999999999999999999 to a group that does not exist"#) == true)
    }

    @Test func validateSettingsReportsAModuleWhoseSchemaPatternOverflows() throws {
        let library = try Self.module("badpattern", pattern: Self.overflowingPattern)
        let file = try Self.settingsFile(#"{"enabled_modules": ["\#(library)"], "processes": {"p": {"type": "picky", "code": "x"}}}"#)
        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("✗ badpattern"), "\(result.stdout)")
        #expect(result.stdout.contains(#"/processes/0/settings_schema/properties/code/pattern: the settings schema of "picky" does not compile"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"backreference \99999999999999999999 to a group that does not exist"#), "\(result.stdout)")
    }

    @Test func consoleRefusesAModuleWhoseSchemaPatternOverflows() throws {
        let library = try Self.module("badconsole", pattern: Self.overflowingPattern)
        let file = try Self.settingsFile(#"{"enabled_modules": ["\#(library)"], "processes": {"p": {"type": "picky"}}}"#)
        let result = try runProgram("agent-control", ["console", "--no-build", "--settings", file])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains(#"module "badconsole""#), "\(result.stderr)")
        #expect(result.stderr.contains(#"backreference \99999999999999999999 to a group that does not exist"#), "\(result.stderr)")
        #expect(result.stderr.contains("nothing was started"))
    }

    @Test func reloadAddingAModuleWithAnOverflowingPatternIsRefusedAndEveryWorkerSurvives() throws {
        let library = try Self.module("badreload", pattern: Self.overflowingPattern)
        let agent = try DaemonTests.Agent(#"{"enabled_modules": ["faults"], "processes": {"a": {"type": "fault"}, "b": {"type": "fault"}}}"#)
        #expect(try agent.control(["start", "--no-build"]).status == 0)
        let before = try agent.waitUntil { $0["a"]?["state"] as? String == "running" && $0["b"]?["state"] as? String == "running" }
        let pids = try ["a", "b"].map { try #require(before[$0]?["pid"] as? Int) }
        let supervisor = try #require(Int32(String(contentsOfFile: agent.directory + "/.agent/run/agent.pid", encoding: .utf8)
            .trimmingCharacters(in: .whitespacesAndNewlines)))

        try agent.write(#"{"enabled_modules": ["faults", "\#(library)"], "processes": {"a": {"type": "fault"}, "b": {"type": "fault"}, "p": {"type": "picky", "code": "x"}}}"#)
        let refused = try agent.control(["reload"])
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("reload refused; the running configuration stays"), "\(refused.stderr)")
        #expect(refused.stderr.contains(#"module "badreload""#), "\(refused.stderr)")
        #expect(refused.stderr.contains("does not compile"), "\(refused.stderr)")

        #expect(AgentRun.isAlive(supervisor))
        let after = try agent.status()
        #expect(after.count == 2)
        for (name, pid) in zip(["a", "b"], pids) {
            #expect(after[name]?["state"] as? String == "running")
            #expect(after[name]?["pid"] as? Int == pid)
            #expect(AgentRun.isAlive(Int32(pid)))
        }
    }

    @Test func editedCacheEntryIsIgnoredWithAWarningAndTheModuleDescribedAfresh() throws {
        let library = try Self.module("cachetrust", pattern: "^[a-z]+$")
        let file = try Self.settingsFile(#"{"enabled_modules": ["\#(library)"], "processes": {"p": {"type": "picky", "code": "abc"}}}"#)
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let cacheFile = directory + "/.agent/cache/manifests.json"
        #expect(try runProgram("validate-settings", ["--settings", file]).status == 0)

        // Same library identity, but the remembered manifest now holds the overflowing pattern.
        let data = try #require(FileManager.default.contents(atPath: cacheFile))
        var cache = try #require(try JSONSerialization.jsonObject(with: data) as? [String: [String: String]])
        let manifest = try #require(cache[library]?["manifest"])
        cache[library]?["manifest"] = manifest.replacingOccurrences(of: "^[a-z]+$", with: #"\\99999999999999999999"#)
        try JSONSerialization.data(withJSONObject: cache).write(to: URL(fileURLWithPath: cacheFile))

        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("✓ cachetrust 1.0.0"), "\(result.stdout)")
        #expect(result.stderr.contains("\(cacheFile): /"), "\(result.stderr)")
        #expect(result.stderr.contains("ignored:"), "\(result.stderr)")
        #expect(result.stderr.contains("the module cachetrust is described afresh"), "\(result.stderr)")
        // Described afresh, the cache holds the library's own manifest again.
        let rewritten = try String(contentsOfFile: cacheFile, encoding: .utf8)
        #expect(!rewritten.contains("99999999999999999999"))
        #expect(try runProgram("validate-settings", ["--settings", file]).stderr.isEmpty)
    }

    @Test(arguments: ["not json at all", "[1, 2]", #"{"/x/liby.so": 5, "/x/libz.so": {"identity": 1}}"#])
    func corruptCacheFileIsIgnoredWithAWarning(text: String) throws {
        let library = try Self.module("cachecorrupt", pattern: "^[a-z]+$")
        let file = try Self.settingsFile(#"{"enabled_modules": ["\#(library)"], "processes": {"p": {"type": "picky", "code": "abc"}}}"#)
        let cacheFile = URL(fileURLWithPath: file).deletingLastPathComponent().path + "/.agent/cache/manifests.json"
        try FileManager.default.createDirectory(atPath: URL(fileURLWithPath: cacheFile).deletingLastPathComponent().path, withIntermediateDirectories: true)
        try text.write(toFile: cacheFile, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("✓ cachecorrupt 1.0.0"), "\(result.stdout)")
        #expect(result.stderr.contains(cacheFile) && result.stderr.contains("ignored"), "\(result.stderr)")
    }

    @Test func periodicQueryWithAnUnboundedPeriodOrWindowIsASettingsError() throws {
        let queries = #"[{"name":"forever","sql":"SELECT 1","every":1e300,"window":60},{"name":"ancient","sql":"SELECT 1","every":1,"window":1e300},{"name":"backwards","sql":"SELECT 1","every":-1,"window":60}]"#
        let library = try CModuleFixture.queryModule("hugequeries", queries: queries)
        let file = try Self.settingsFile(#"{"enabled_modules": ["\#(library)"], "processes": {"w": {"type": "watcher"}}}"#)
        let result = try runProgram("validate-settings", ["--settings", file])
        #expect(result.status == 2, "\(result.stdout)")
        #expect(result.stdout.contains(#"the periodic query "forever" of "watcher" cannot run: its period must be 0 (never) or 0.1 to 86400 seconds, found 1e+300"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"the periodic query "ancient" of "watcher" cannot run: its window must be 0 to 315360000 seconds, found 1e+300"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"the periodic query "backwards" of "watcher" cannot run: its period must be 0 (never) or 0.1 to 86400 seconds, found -1"#), "\(result.stdout)")
    }
}
