@testable import AgentSupervision
import AgentTestSupport
import Foundation
import JSONSchema
import Testing
@testable import AgentCore
@testable import AgentRuntime

/// A value that came from the environment (`${env:NAME}`) is never printed: not in the
/// validation report (text or JSON), not in the log, not in a refused start.
@Suite(.ownThreads, .serialized) struct SecretRedactionTests {
    static let secret = "S3CR3T-TOKEN-XYZ"

    private func settingsFile(_ text: String) throws -> String {
        let file = TestPaths.temporaryDirectory("secrets") + "/settings.json"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        return file
    }

    static let invalid = #"{"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "interval": "${env:EVAL_SECRET}", "pairs": ["ETH/USD", 7, "${env:EVAL_SECRET}"]}}}"#

    @Test func validationReportSaysWhereAValueCameFromInsteadOfShowingIt() throws {
        let file = try settingsFile(Self.invalid)
        let text = try runProgram("validate-settings", ["--settings", file, "--no-build"], environment: ["EVAL_SECRET": Self.secret])
        #expect(text.status == 2)
        #expect(text.stdout.contains(#"/processes/trades/interval: expected a number ≥ 0.001, found a string from ${env:EVAL_SECRET} (not shown)"#), "\(text.stdout)")
        #expect(!text.stdout.contains(Self.secret) && !text.stderr.contains(Self.secret), "\(text.stdout)\(text.stderr)")
        let json = try runProgram("agent-control", ["validate", "--settings", file, "--no-build", "--json"], environment: ["EVAL_SECRET": Self.secret])
        #expect(json.status == 2)
        #expect(json.stdout.contains("a string from ${env:EVAL_SECRET} (not shown)"), "\(json.stdout)")
        #expect(!json.stdout.contains(Self.secret) && !json.stderr.contains(Self.secret))
    }

    @Test func refusedStartKeepsTheValueOutOfTheTerminalAndTheLog() throws {
        let file = try settingsFile(Self.invalid)
        let directory = URL(fileURLWithPath: file).deletingLastPathComponent().path
        let started = try runProgram("agent-control", ["start", "--settings", file, "--no-build"], environment: ["EVAL_SECRET": Self.secret])
        #expect(started.status != 0)
        let log = (try? String(contentsOfFile: directory + "/.agent/log/agent.log", encoding: .utf8)) ?? ""
        let everything = started.stdout + started.stderr + log
        #expect(everything.contains("found a string from ${env:EVAL_SECRET} (not shown)"), "\(everything)")
        #expect(!everything.contains(Self.secret), "\(everything)")
    }

    @Test func valuesShownInsideContainersAndSuggestionsAreShownAsWritten() throws {
        setenv("AGENT_REDACTION_TEST", "sloww", 1)
        setenv("AGENT_REDACTION_LONG", String(repeating: "k", count: 60), 1)
        let manifest = try ModuleManifest(json: """
        {"name":"m","version":"1","processes":[{"type":"t","kind":"datasource","settings_schema":{"type":"object","properties":{
          "mode":{"enum":["fast","slow"]}, "nested":{"type":"string"}, "long":{"type":"string","maxLength":10}}}}]}
        """, module: "m", file: "libm.so")
        let settings = AgentSettings(json: try JSONValue.parse("""
        {"enabled_modules": ["m"], "processes": {"p": {"type": "t", "mode": "${env:AGENT_REDACTION_TEST}",
          "nested": {"token": "x-${env:AGENT_REDACTION_TEST}"}, "long": "${env:AGENT_REDACTION_LONG}"}}}
        """), file: "settings.json")
        var validator = SettingsValidator()
        let report = validator.check(settings, modules: [ModuleLocation(name: "m", library: "libm.so", sourceDirectory: nil)], manifests: ["m": manifest])
        let messages = Dictionary(report.processes[0].issues.map { ($0.pointer, $0.message) }, uniquingKeysWith: { $0 + " | " + $1 })
        #expect(messages.count == 3, "\(messages)")
        #expect(messages["/processes/p/mode"]?.contains("found a string from ${env:AGENT_REDACTION_TEST} (not shown)") == true, "\(messages)")
        #expect(messages["/processes/p/nested"]?.contains(#"{"token":"x-${env:AGENT_REDACTION_TEST}"}"#) == true, "\(messages)")
        #expect(messages["/processes/p/long"]?.contains("found a string from ${env:AGENT_REDACTION_LONG} (not shown)") == true, "\(messages)")
        for message in messages.values {
            #expect(!message.contains("sloww") && !message.contains("kkkkkkkkkk"), "\(message)")
        }
    }
}
