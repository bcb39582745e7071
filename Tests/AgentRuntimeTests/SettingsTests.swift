import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime

@Suite struct SettingsTests {
    private func issues(_ json: String) throws -> [SettingsIssue] {
        do {
            _ = try AgentSettings(json: try JSONValue.parse(json), file: "settings.json")
            return []
        } catch let error as SettingsError {
            return error.issues
        }
    }

    @Test func validSettingsSplitHostKeysFromModuleSettings() throws {
        let settings = try AgentSettings(json: try JSONValue.parse("""
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

    @Test func everyStructuralProblemIsReportedAtOnceWithItsPointer() throws {
        let found = try issues("""
        {"enabled_module": ["sample"],
         "processes": {"a": {"enabled": "yes"}, "b": {"type": 42}, "c d": {"type": "x"}, "e": [1]}}
        """)
        let byPointer = Dictionary(found.map { ($0.pointer, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(byPointer["/enabled_module"]?.contains("did you mean \"enabled_modules\"?") == true)
        #expect(byPointer["/enabled_modules"]?.contains("missing") == true)
        #expect(byPointer["/processes/a"]?.contains("missing \"type\"") == true)
        #expect(byPointer["/processes/a/enabled"] == "expected true or false, found \"yes\" (string)")
        #expect(byPointer["/processes/b/type"] == "expected a process type name (string), found 42 (integer)")
        #expect(byPointer["/processes/c d"]?.contains("may contain only letters") == true)
        #expect(byPointer["/processes/e"]?.contains("found an array of 1 item") == true)
        #expect(found.count == 7)
        #expect(found.allSatisfy { $0.file == "settings.json" })
    }

    @Test func settingsThatAreNotAnObjectSayWhatWasFound() throws {
        let found = try issues("[1, 2]")
        #expect(found.map(\.description) == ["settings.json: /: expected an object with \"enabled_modules\" and \"processes\", found an array of 2 items"])
    }

    @Test func unreadableOrInvalidFilesAreClearErrors() throws {
        #expect(throws: SettingsError.self) { try AgentSettings.load(file: "/nonexistent/settings.json") }
        do {
            _ = try AgentSettings.load(file: "/nonexistent/settings.json")
        } catch let error as SettingsError {
            #expect(error.issues[0].message.contains("cannot read the settings file"))
        }
        let directory = TestPaths.temporaryDirectory("settings")
        let file = directory + "/settings.json"
        try "{\"enabled_modules\": [}".write(toFile: file, atomically: true, encoding: .utf8)
        do {
            _ = try AgentSettings.load(file: file)
            Issue.record("invalid JSON was accepted")
        } catch let error as SettingsError {
            #expect(error.issues[0].file == file)
            #expect(error.issues[0].message.hasPrefix("not valid JSON"))
        }
    }

    @Test func unknownProcessTypeSuggestsTheClosestOne() throws {
        let settings = try AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_fed"}, "feed": {"type": "trade_feed", "subscribe": ["x"]}}}
        """), file: "settings.json")
        let manifest = try ModuleManifest(json: """
        {"name":"sample","version":"1","processes":[{"type":"trade_feed","kind":"datasource"},{"type":"trade_frequency","kind":"monitor","subscribes":["trade"]}]}
        """, module: "sample", file: "libsample.so")
        let module = ModuleLocation(name: "sample", library: "libsample.so", sourceDirectory: nil)
        do {
            _ = try Supervisor.plan(settings: settings, modules: [module], manifests: ["sample": manifest])
            Issue.record("an unknown type was accepted")
        } catch let error as SettingsError {
            #expect(error.issues.count == 2)
            #expect(error.issues[0].pointer == "/processes/trades/type")
            #expect(error.issues[0].message.contains("unknown process type \"trade_fed\"; did you mean \"trade_feed\"?"))
            #expect(error.issues[1].pointer == "/processes/feed/subscribe")
            #expect(error.issues[1].message.contains("only monitors receive events"))
        }
    }

    @Test func monitorsGetTheirTypesDefaultSubscriptionsUnlessSettingsOverride() throws {
        let settings = try AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": ["sample"], "processes": {"a": {"type": "trade_frequency"}, "b": {"type": "trade_frequency", "subscribe": ["*"]}}}
        """), file: "settings.json")
        let manifest = try ModuleManifest(json: #"{"name":"sample","version":"1","processes":[{"type":"trade_frequency","kind":"monitor","subscribes":["trade"]}]}"#,
                                          module: "sample", file: "libsample.so")
        let planned = try Supervisor.plan(settings: settings, modules: [ModuleLocation(name: "sample", library: "x", sourceDirectory: nil)],
                                          manifests: ["sample": manifest])
        #expect(planned.map(\.subscriptions) == [["trade"], ["*"]])
    }

    @Test func suggestionsCatchTyposButNotUnrelatedNames() {
        #expect(Suggestions.closest(to: "intervall", in: ["interval", "pairs"]) == "interval")
        #expect(Suggestions.closest(to: "proceses", in: ["enabled_modules", "processes"]) == "processes")
        #expect(Suggestions.closest(to: "Pairs", in: ["pairs"]) == "pairs")
        #expect(Suggestions.closest(to: "colour", in: ["interval", "pairs"]) == nil)
    }
}
