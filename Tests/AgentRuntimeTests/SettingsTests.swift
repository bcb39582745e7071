@testable import AgentBase
@testable import AgentStore
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime
@testable import AgentCore

@Suite(.ownThreads) struct SettingsTests {
    private func issues(_ json: String) throws -> [SettingsIssue] {
        AgentSettings(json: try JSONValue.parse(json), file: "settings.json").hostIssues
    }

    private func check(_ json: String, manifests: [String: ModuleManifest]) throws -> SettingsReport {
        let settings = AgentSettings(json: try JSONValue.parse(json), file: "settings.json")
        var validator = SettingsValidator()
        let modules = manifests.keys.sorted().map { ModuleLocation(name: $0, library: "lib\($0).so", sourceDirectory: nil) }
        return validator.check(settings, modules: modules, manifests: manifests)
    }

    static let sampleManifest = try! ModuleManifest(json: """
    {"name":"sample","version":"1","processes":[
      {"type":"trade_feed","kind":"datasource","settings_schema":{"type":"object","additionalProperties":false,"required":["pairs"],
        "properties":{"pairs":{"type":"array","items":{"type":"string"},"minItems":1},"interval":{"type":"number","minimum":0.1,"default":0.5}}}},
      {"type":"trade_frequency","kind":"monitor","subscribes":["trade"],"settings_schema":{"type":"object"}}]}
    """, module: "sample", file: "libsample.so")

    @Test func validSettingsSplitHostKeysFromModuleSettings() throws {
        let settings = AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": ["sample"],
         "processes": {"trades": {"type": "trade_feed", "interval": 0.2},
                       "busy": {"type": "trade_frequency", "enabled": false, "subscribe": ["trade"]}}}
        """), file: "/agents/a/settings.json")
        #expect(settings.agentDirectory == "/agents/a")
        #expect(settings.enabledModules == ["sample"])
        #expect(settings.processes.map(\.name) == ["trades", "busy"])
        #expect(settings.enabledProcesses.map(\.name) == ["trades"])
        #expect(settings.processes[0].moduleSettings == ["interval": .number(JSONNumber(0.2))])
        #expect(settings.processes[1].subscribe == ["trade"])
        #expect(settings.processes[1].moduleSettings.isEmpty)
    }

    @Test func everyHostLevelProblemIsReportedAtOnceWithItsPointer() throws {
        let found = try issues("""
        {"enabled_module": ["sample"],
         "processes": {"a": {"enabled": "yes"}, "b": {"type": 42}, "c d": {"type": "x"}, "e": [1],
                       "f": {"type": "x", "restart": "sometimes", "stop_timeout": -1}}}
        """)
        let byPointer = Dictionary(found.map { ($0.pointer, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(byPointer[""]?.contains("unknown property \"enabled_module\"; did you mean \"enabled_modules\"?") == true)
        #expect(byPointer[""]?.contains("enabled_modules") == true)
        #expect(byPointer["/processes/a"]?.contains("\"type\"") == true)
        #expect(byPointer["/processes/a/enabled"] == "expected a boolean, found \"yes\" (string)")
        #expect(byPointer["/processes/b/type"] == "expected a string, found 42 (integer)")
        #expect(byPointer["/processes/c d"]?.contains("may contain only letters") == true)
        #expect(byPointer["/processes/e"]?.contains("expected an object") == true)
        #expect(byPointer["/processes/f/restart"]?.contains("did you mean") == true || byPointer["/processes/f/restart"]?.contains("\"always\", \"on-failure\", \"never\"") == true)
        #expect(byPointer["/processes/f/stop_timeout"] == "expected a number ≥ 0, found -1")
        #expect(found.allSatisfy { $0.file == "settings.json" })
        #expect(found.filter { $0.process == "f" }.count == 2)
    }

    @Test func settingsThatAreNotAnObjectSayWhatWasFound() throws {
        let found = try issues("[1, 2]")
        #expect(found.count == 1)
        #expect(found[0].message.contains("expected an object"))
    }

    @Test func unreadableOrInvalidFilesAreClearErrors() throws {
        do {
            _ = try AgentSettings.load(file: "/nonexistent/settings.json")
            Issue.record("a missing file was accepted")
        } catch {
            #expect(error.issues[0].message.contains("cannot read the settings file: No such file or directory"))
        }
        let directory = TestPaths.temporaryDirectory("settings")
        let file = directory + "/settings.json"
        try "{\"enabled_modules\": [\n  \"sample\",\n}".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try AgentSettings.load(file: file)
            Issue.record("invalid JSON was accepted")
        } catch {
            #expect(error.issues[0].file == file)
            #expect(error.issues[0].message.hasPrefix("not valid JSON at line 3, column 1:"))
        }
    }

    @Test func unknownProcessTypeSuggestsTheClosestOneAndListsWhatModulesProvide() throws {
        let report = try check("""
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_fed"}, "feed": {"type": "trade_feed", "pairs": ["A"], "subscribe": ["x"]}}}
        """, manifests: ["sample": Self.sampleManifest])
        let issues = report.blockingIssues
        #expect(issues.count == 2)
        #expect(issues[0].pointer == "/processes/trades/type")
        #expect(issues[0].message == "unknown process type \"trade_fed\"; did you mean \"trade_feed\"?; the enabled modules provide: sample (trade_feed, trade_frequency); chat (chatbot)")
        #expect(issues[1].pointer == "/processes/feed/subscribe")
        #expect(issues[1].message.contains("only monitors and logic adapters receive events"))
        #expect(report.planned.isEmpty)
    }

    @Test func moduleSettingsAreValidatedAgainstTheTypeSchemaWithEveryError() throws {
        let report = try check("""
        {"enabled_modules": ["sample"], "processes": {
          "missing": {"type": "trade_feed"},
          "wrong": {"type": "trade_feed", "pairs": "ETH/USD", "interval": 0.01, "intervall": 1},
          "host_typo": {"type": "trade_feed", "pairs": ["A"], "enabeld": false},
          "off": {"type": "trade_feed", "enabled": false, "pairs": 5},
          "ok": {"type": "trade_feed", "pairs": ["A"]}}}
        """, manifests: ["sample": Self.sampleManifest])
        let messages = report.blockingIssues.map(\.description)
        #expect(messages.contains("settings.json: /processes/missing: missing required property \"pairs\""))
        #expect(messages.contains("settings.json: /processes/wrong/pairs: expected an array, found \"ETH/USD\" (string)"))
        #expect(messages.contains("settings.json: /processes/wrong/interval: expected a number ≥ 0.1, found 0.01"))
        #expect(messages.contains("settings.json: /processes/wrong: unknown property \"intervall\"; did you mean \"interval\"?"))
        #expect(messages.contains("settings.json: /processes/host_typo: unknown property \"enabeld\"; did you mean the host setting \"enabled\"?"))
        #expect(messages.count == 5)
        // The disabled process is checked and reported, but does not block.
        #expect(report.processes.first { $0.name == "off" }?.isValid == false)
        // Defaults are applied to what the valid process gets.
        #expect(report.planned.map(\.name) == ["ok"])
        #expect(report.planned[0].settings["interval"] == 0.5)
    }

    @Test func monitorsGetTheirTypesDefaultSubscriptionsUnlessSettingsOverride() throws {
        let report = try check("""
        {"enabled_modules": ["sample"], "processes": {"a": {"type": "trade_frequency"}, "b": {"type": "trade_frequency", "subscribe": ["*"]}}}
        """, manifests: ["sample": Self.sampleManifest])
        #expect(report.isValid)
        #expect(report.planned.map(\.subscriptions) == [["trade"], ["*"]])
    }

    @Test func restartPolicyIsReadFromTheShortAndTheLongForm() throws {
        let settings = AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": [], "processes": {
          "a": {"type": "t", "restart": "on-failure", "watchdog": 3, "stop_timeout": 1},
          "b": {"type": "t", "restart": {"policy": "never", "initial_delay": 0, "max_restarts": null, "within": 5}}}}
        """), file: "settings.json")
        #expect(settings.hostIssues.isEmpty)
        let a = settings.processes[0].policy, b = settings.processes[1].policy
        #expect(a.restart == .onFailure && a.watchdog == 3 && a.stopTimeout == 1 && a.maximumRestarts == 5)
        #expect(b.restart == .never && b.initialDelay == 0 && b.maximumRestarts == nil && b.within == 5)
        #expect(b.delay(afterFailuresInARow: 3) == 0)
        #expect(ProcessPolicy().delay(afterFailuresInARow: 4) == 0.8)
        #expect(ProcessPolicy().delay(afterFailuresInARow: 40) == 30)
    }

    @Test func queueLimitDefaultsToSixteenMegabytesWhenDroppingAndOneWhenBlocking() throws {
        let settings = AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": [], "processes": {
          "a": {"type": "t"},
          "b": {"type": "t", "queue": {"when_full": "drop-oldest"}},
          "c": {"type": "t", "queue": {"when_full": "block"}},
          "d": {"type": "t", "queue": {"when_full": "block", "limit_bytes": 33554432}},
          "e": {"type": "t", "queue": {"limit_bytes": 4096}}}}
        """), file: "settings.json")
        #expect(settings.hostIssues.isEmpty)
        let policies = settings.processes.map(\.policy)
        #expect(policies.map(\.queueLimit) == [16 << 20, 16 << 20, 1 << 20, 32 << 20, 4096])
        #expect(policies.map(\.whenFull) == ["drop-oldest", "drop-oldest", "block", "block", "drop-oldest"])
    }

    @Test func storeCommitIntervalIsReadAndAnOutOfRangeOneIsAnError() throws {
        #expect(StoreSettings(nil).commitInterval == 0.005)
        #expect(StoreSettings(try JSONValue.parse(#"{"commit_interval": 0}"#)).commitInterval == 0)
        let found = try issues(#"{"enabled_modules": [], "processes": {}, "store": {"commit_interval": 2}}"#)
        #expect(found.map(\.pointer) == ["/store/commit_interval"])
        #expect(found.first?.message == "expected a number ≤ 1, found 2")
    }

    @Test func processAndModuleNamesMustBePlainNames() throws {
        let found = try issues("""
        {"enabled_modules": ["sample", "..", ".", "lib/../libx.so", "a\\u0000b"],
         "processes": {".": {"type": "t"}, "..": {"type": "t"}, "-v": {"type": "t"}, "a/b": {"type": "t"}, "ok.name-2_x": {"type": "t"},
                       "\(String(repeating: "n", count: 201))": {"type": "t"}}}
        """)
        let byPointer = Dictionary(found.map { ($0.pointer, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(byPointer["/processes/."]?.contains("process name \".\" is not a plain name") == true, "\(byPointer)")
        #expect(byPointer["/processes/.."]?.contains("process name \"..\" is not a plain name") == true)
        #expect(byPointer["/processes/-v"]?.contains("must not start with '-'") == true)
        #expect(byPointer["/processes/a~1b"]?.contains("may contain only letters") == true)
        #expect(byPointer["/processes/" + String(repeating: "n", count: 201)]?.contains("at most 200") == true)
        #expect(byPointer["/processes/ok.name-2_x"] == nil)
        #expect(byPointer["/enabled_modules/1"]?.contains("module name \"..\" is not a plain name") == true, "\(byPointer)")
        #expect(byPointer["/enabled_modules/2"]?.contains("module name \".\" is not a plain name") == true)
        #expect(byPointer["/enabled_modules/4"]?.contains(#"module name "a\u0000b" may contain only"#) == true, "\(byPointer)")
        #expect(byPointer["/enabled_modules/3"] == nil, "a path is a path")
        let settings = AgentSettings(json: try JSONValue.parse(#"{"enabled_modules": ["sample", ".."], "processes": {}}"#), file: "/a/settings.json")
        #expect(settings.enabledModules == ["sample"])
    }

    /// "\u{212B}" and "\u{C5}" are two keys to JSON but one name to Swift's String ==.
    @Test func processNamesThatAreNotComposedAreRefused() throws {
        let found = try issues(#"{"enabled_modules": ["sample"], "processes": {"\u00c5": {"type": "trade_feed"}, "\u212b": {"type": "trade_feed"}, "A\u030a": {"type": "trade_feed"}}}"#)
        let refused = found.filter { $0.message.contains("is not in composed Unicode form (NFC)") }
        #expect(refused.count == 2, "\(found)")
        #expect(refused.allSatisfy { $0.pointer.unicodeScalars.elementsEqual("/processes/\u{212B}".unicodeScalars) || $0.pointer.unicodeScalars.elementsEqual("/processes/A\u{30A}".unicodeScalars) }, "\(refused)")
        #expect(!found.contains { $0.pointer.unicodeScalars.elementsEqual("/processes/\u{C5}".unicodeScalars) }, "\(found)")
    }

    @Test func locatorRefusesAModuleNameThatLeavesTheModulesFolder() throws {
        let directory = TestPaths.temporaryDirectory("locate")
        try FileManager.default.createDirectory(atPath: directory + "/modules", withIntermediateDirectories: true)
        let locator = ModuleLocator(agentDirectory: directory, configuration: "debug", searchPath: [], runtimeDirectory: nil)
        #expect(throws: ModuleLoadError.self) { try locator.locate("..") }
        #expect(throws: ModuleLoadError.self) { try locator.locate(".") }
    }

    @Test func suggestionsCatchTyposButNotUnrelatedNames() {
        #expect(Suggestions.closest(to: "intervall", among: ["interval", "pairs"]) == "interval")
        #expect(Suggestions.closest(to: "proceses", among: ["enabled_modules", "processes"]) == "processes")
        #expect(Suggestions.closest(to: "Pairs", among: ["pairs"]) == "pairs")
        #expect(Suggestions.closest(to: "colour", among: ["interval", "pairs"]) == nil)
    }
}
