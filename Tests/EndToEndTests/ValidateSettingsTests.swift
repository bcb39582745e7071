import AgentTestSupport
import Foundation
import Testing

/// `validate-settings` and `agent-control validate`, as a user runs them.
@Suite(.ownThreads) struct ValidateSettingsTests {
    private func run(_ program: String, _ arguments: [String]) throws -> ProgramResult {
        try runProgram(program, arguments)
    }

    private func settingsFile(_ text: String) throws -> String {
        let file = TestPaths.temporaryDirectory("validate") + "/settings.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    @Test func validSettingsGiveAReportAndExitZero() throws {
        let file = try settingsFile(#"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed"}, "off": {"type": "trade_frequency", "enabled": false}}}"#)
        let result = try run("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status == 0, "\(result.stdout)\(result.stderr)")
        #expect(result.stdout.contains("✓ sample 1.0.0"))
        #expect(result.stdout.contains("✓ trades  trade_feed (sample), enabled, valid"))
        #expect(result.stdout.contains("- off     trade_frequency (sample), disabled, valid"))
        #expect(result.stdout.hasSuffix("settings are valid\n"))
    }

    @Test func everyKindOfErrorIsReportedAtOnceAsJSON() throws {
        let file = try settingsFile("""
        {"enabled_modules": ["sample", "nosuch"], "extra": true,
         "processes": {"a": {"type": "trade_feed", "pairs": [1]}, "b": {"type": "nope"}, "c": {"type": "trade_frequency", "window": 0}}}
        """)
        let result = try run("agent-control", ["validate", "--settings", file, "--no-build", "--json"])
        #expect(result.status == 2)
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        #expect(report["valid"] as? Bool == false)
        let errors = try #require(report["errors"] as? [[String: Any]])
        let pointers = Set(errors.compactMap { $0["pointer"] as? String })
        // "nope" may come from the module that did not load: only the module's error counts.
        #expect(pointers == ["", "/enabled_modules", "/processes/a/pairs/0", "/processes/c/window"])
        let modules = try #require(report["modules"] as? [[String: Any]])
        #expect(modules.first { $0["name"] as? String == "nosuch" }?["available"] as? Bool == false)
        #expect(modules.first { $0["name"] as? String == "sample" }?["process_types"] as? [String] == ["trade_feed", "trade_frequency", "trades_counter", "word_count"])
        let processes = try #require(report["processes"] as? [[String: Any]])
        #expect(processes.map { $0["valid"] as? Bool } == [false, false, false])
        let b = try #require(processes.first { $0["name"] as? String == "b" })
        let bError = try #require((b["errors"] as? [[String: Any]])?.first)
        #expect((bError["message"] as? String)?.contains(#"it may come from module "nosuch", which could not be loaded"#) == true, "\(bError)")
        #expect(bError["follows_from"] as? String == "/enabled_modules")
    }

    @Test func aTaskTypeConfiguredAsAProcessIsRefusedSayingWhereItGoes() throws {
        let file = try settingsFile(#"{"enabled_modules": ["sample"], "processes": {"counter": {"type": "word_count"}}}"#)
        let result = try run("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status == 2)
        #expect(result.stdout.contains(#""word_count" is a task type: its runs start on request and end; define it under "tasks""#), "\(result.stdout)")
    }

    @Test func misspelledModuleGetsOneErrorWithASuggestionInsteadOfOnePerProcessType() throws {
        let file = try settingsFile("""
        {"enabled_modules": ["sampel"], "processes": {"trades": {"type": "trade_feed"}, "busy": {"type": "trade_frequency"},
         "again": {"type": "trade_feed"}, "typo": {"type": "chatbto"},
         "chat": {"type": "chatbot", "logic_adapters": ["status", "sample.trades_counter"]}}}
        """)
        let result = try run("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status == 2)
        #expect(result.stdout.contains(#"module not found; did you mean "sample"?"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"the process types "trade_feed", "trade_frequency" (of trades, busy, again) are provided by no loaded module and may come from it"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"the logic adapter "sample.trades_counter" (of chat) may come from it too"#), "\(result.stdout)")
        #expect(result.stdout.contains(#"/processes/chat/logic_adapters/1: unknown logic adapter "sample.trades_counter"; it may come from module "sampel""#), "\(result.stdout)")
        // A type close to a known one is its own error; the others follow from the module.
        #expect(result.stdout.contains(#"unknown process type "chatbto"; did you mean "chatbot"?"#), "\(result.stdout)")
        #expect(result.stdout.hasSuffix("2 errors; settings are invalid\n"), "\(result.stdout)")
        let json = try run("agent-control", ["validate", "--settings", file, "--no-build", "--json"])
        let report = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any])
        let errors = try #require(report["errors"] as? [[String: Any]])
        #expect(errors.compactMap { $0["pointer"] as? String }.sorted() == ["/enabled_modules", "/processes/typo/type"], "\(errors)")
    }

    @Test func syntaxErrorIsReportedWithLineAndColumn() throws {
        let file = try settingsFile("{\n  \"enabled_modules\": [\"sample\"],\n  \"processes\": {,}\n}")
        let result = try run("validate-settings", ["--settings", file])
        #expect(result.status == 2)
        #expect(result.stderr.contains("\(file): /processes: not valid JSON at line 3, column 17:"), "\(result.stderr)")
    }

    @Test func aRepeatedKeyIsRefusedWithItsPointerAndLine() throws {
        // The last one used to win, unseen: almost surely a mistake (an edit that forgot the first).
        let file = try settingsFile("{\n  \"enabled_modules\": [\"sample\"],\n  \"processes\": {\"p\": {\"type\": \"trade_feed\",\n    \"type\": \"chatbot\"}}\n}")
        let result = try run("validate-settings", ["--settings", file])
        #expect(result.status == 2)
        #expect(result.stderr.contains(#"\#(file): /processes/p/type: not valid JSON at line 4, column 5: the key "type" appears twice in one object; keep one of them"#),
                "\(result.stderr)")
    }

    @Test func missingFileIsAClearError() throws {
        let result = try run("validate-settings", ["--settings", "/nonexistent/settings.json"])
        #expect(result.status == 2)
        #expect(result.stderr.contains("/nonexistent/settings.json: /: cannot read the settings file: No such file or directory"))
    }

    @Test func shippedModulesAcceptTheirOwnSettingsTemplates() throws {
        for module in ["sample", "system"] {
            // Checked on a copy: validating in place would write modules/<name>/.agent/.
            let template = TestPaths.temporaryDirectory("template") + "/settings.json"
            try FileManager.default.copyItem(atPath: TestPaths.repository + "/modules/\(module)/settings_template.json", toPath: template)
            let result = try run("validate-settings", ["--settings", template, "--no-build"])
            #expect(result.status == 0, "\(module): \(result.stdout)\(result.stderr)")
        }
    }

    @Test func shippedModulesDecodeTheirTemplatesWhenRun() throws {
        for module in ["sample", "system"] {
            let template = TestPaths.repository + "/modules/\(module)/settings_template.json"
            let text = try String(contentsOfFile: template, encoding: .utf8)
            let agent = try AgentRun(settings: text, arguments: ["--no-build", "--quiet"])
            let count = (try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])?["processes"].map { ($0 as? [String: Any])?.count ?? 0 } ?? 0
            let ready = agent.waitForLines(onStderr: true, count: count) { $0.contains("ready in") }
            #expect(ready.count == count, "\(agent.transcript)")
            Thread.sleep(forTimeInterval: 0.3)
            #expect(!agent.stderrLines.contains { $0.contains("not restarting") || $0.contains("restarting in") }, "\(agent.transcript)")
            #expect(agent.stop() == 0)
        }
    }
}

/// Secrets come from the environment: `${env:NAME}` in any process setting.
@Suite(.ownThreads) struct EnvironmentReferenceTests {
    static let settings = #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "pairs": ["${env:AGENT_TEST_PAIR}"], "interval": 0.01}}}"#

    @Test func missingVariableIsASettingsErrorAtItsPointer() throws {
        let file = TestPaths.temporaryDirectory("env") + "/settings.json"
        try Self.settings.write(toFile: file, atomically: true, encoding: .utf8)
        let result = try runProgram("validate-settings", ["--settings", file, "--no-build"])
        #expect(result.status == 2)
        #expect(result.stdout.contains("/processes/trades/pairs/0: environment variable AGENT_TEST_PAIR is not set (referenced as ${env:AGENT_TEST_PAIR})"), "\(result.stdout)")
    }

    @Test func variableValueReachesTheProcess() throws {
        let agent = try AgentRun(settings: Self.settings, environment: ["AGENT_TEST_PAIR": "SECRET/PAIR"])
        #expect(agent.waitForLine { $0.contains(#""pair":"SECRET\/PAIR""#) || $0.contains(#""pair":"SECRET/PAIR""#) } != nil, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }
}

/// Manifests are remembered between runs by library identity, and a rebuilt library is
/// described again.
@Suite(.ownThreads) struct ManifestCacheTests {
    @Test func rebuiltLibraryIsDescribedAgain() throws {
        func manifest(_ version: String) -> String {
            #"{"name":"cached","version":"\#(version)","processes":[{"type":"ticker","kind":"datasource","settings_schema":{"type":"object"}}]}"#
        }
        let library = try CModuleFixture.module("cached", manifest: manifest("1.0.0"))
        let directory = TestPaths.temporaryDirectory("cache")
        try #"{"enabled_modules": ["\#(library)"], "processes": {}}"#.write(toFile: directory + "/settings.json", atomically: true, encoding: .utf8)
        let first = try runProgram("validate-settings", ["--settings", directory + "/settings.json"])
        #expect(first.stdout.contains("✓ cached 1.0.0"), "\(first.stdout)")
        let cache = try String(contentsOfFile: directory + "/.agent/cache/manifests.json", encoding: .utf8)
        #expect(cache.contains(library))
        Thread.sleep(forTimeInterval: 0.01)
        // Rebuilt where it was (each fixture build has a folder of its own).
        let rebuilt = try CModuleFixture.module("cached", manifest: manifest("2.0.0"))
        #expect(rename(rebuilt, library) == 0)
        let second = try runProgram("validate-settings", ["--settings", directory + "/settings.json"])
        #expect(second.stdout.contains("✓ cached 2.0.0"), "\(second.stdout)")
    }
}

extension ValidateSettingsTests {
    /// `chat` is the runtime's own module (the chatbot): enabling it by name would mix a module
    /// of the agent's named so with it; the entry is refused at its pointer, saying what to do.
    @Test func theBuiltInChatModuleEnabledByNameIsRefusedAtItsEntry() throws {
        let file = try settingsFile(#"{"enabled_modules": ["sample", "chat"], "processes": {"trades": {"type": "trade_feed"}}}"#)
        let result = try run("agent-control", ["validate", "--settings", file, "--no-build", "--json"])
        #expect(result.status == 2, "\(result.stdout)\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any])
        let errors = try #require(report["errors"] as? [[String: Any]])
        let entry = try #require(errors.first { $0["pointer"] as? String == "/enabled_modules/1" }, "\(errors)")
        #expect((entry["message"] as? String)?.contains("the runtime's built-in module") == true, "\(entry)")
        #expect(errors.count == 1, "only the entry: \(errors)")
    }
}
