@testable import AgentCore
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A `jsonl/1` module's `module.json`, read as data with a library manifest's distrust.
@Suite(.ownThreads) struct ProgramManifestTests {
    private func manifest(_ text: String, module: String = "weather") throws(ModuleLoadError) -> ModuleManifest {
        let folder = TestPaths.temporaryDirectory("manifest") + "/\(module)"
        try? FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let file = folder + "/module.json"
        try? text.write(toFile: file, atomically: true, encoding: .utf8)
        return try ModuleManifest(programManifest: file, module: module)
    }

    private func problems(_ text: String) -> String {
        do {
            _ = try manifest(text)
            return "accepted"
        } catch {
            #expect(error.code == .invalidManifest)
            return error.message
        }
    }

    @Test func aGoodManifestGivesItsTypesWithTheirCommands() throws {
        let read = try manifest(#"""
            {"name": "weather", "version": "1.2.0", "protocol": "jsonl/1", "description": "A station.",
             "process_types": {
               "reading": {"kind": "datasource", "command": ["python3", "source.py"], "settings": {"type": "object", "properties": {"every": {"type": "number", "default": 5}}}},
               "frost": {"kind": "monitor", "command": ["./frost"], "subscribe": ["reading"]},
               "forecast": {"kind": "logic_adapter", "command": ["node", "f.js"], "examples": ["will it rain?"], "description": "Forecasts."},
               "report": {"kind": "task", "command": ["sh", "r.sh"], "input_schema": {"type": "object"}, "heartbeat_timeout": 30}}}
            """#)
        #expect(read.name == "weather" && read.version == "1.2.0")
        #expect(read.processes.map(\.type) == ["reading", "frost", "forecast", "report"])
        #expect(read.processType("reading")?.command == ["python3", "source.py"])
        #expect(read.processType("frost")?.subscribes == ["reading"])
        #expect(read.processType("forecast")?.usageExamples == ["will it rain?"])
        #expect(read.processType("report")?.heartbeatTimeout == 30)
        #expect(read.directory?.hasSuffix("/weather") == true)
    }

    @Test func aProcessTypeNamedLikeTheRuntimesOwnIsRefusedRatherThanShadowed() {
        let program = problems(#"{"name": "weather", "version": "1", "protocol": "jsonl/1", "process_types": {"executor": {"kind": "datasource", "command": ["sh", "x.sh"]}}}"#)
        #expect(program.contains("/process_types/executor: expected a process type name the runtime does not provide itself (executor), found \"executor\""), "\(program)")
        do {
            _ = try ModuleManifest(json: #"{"name": "lib", "version": "1", "processes": [{"type": "executor", "kind": "datasource"}]}"#, module: "lib", file: "lib.so")
            Issue.record("a library manifest declaring the type executor was accepted")
        } catch {
            #expect(error.message.contains("/processes/0/type: expected a process type name the runtime does not provide itself"), "\(error.message)")
        }
    }

    @Test func everyProblemIsReportedAtItsPointerWithExpectedAndFound() {
        let message = problems(#"""
            {"name": "wether", "version": "", "protocol": "jsonl/2", "extra": 1,
             "process_types": {"a b": {"kind": "source", "command": [], "settings": 3, "subscribe": [1]},
                               "t": {"kind": "datasource", "command": ["x", ""], "input_schema": {}}}}
            """#)
        for expected in [
            #"/name: expected "weather" (the module's folder name), found "wether" (string)"#,
            #"/version: expected a non-empty string (e.g. "1.0.0"), found "" (string)"#,
            #"/protocol: expected "jsonl/1" (the only protocol this runtime speaks), found "jsonl/2" (string)"#,
            #"/extra: expected one of the members name, version, protocol, description, process_types, found "extra""#,
            #"/process_types/a b: expected a type name of letters, digits, '_' and '-'"#,
            #"/process_types/a b/kind: expected one of datasource, monitor, logic_adapter, task, found "source" (string)"#,
            #"/process_types/a b/command: expected a non-empty array of strings"#,
            #"/process_types/a b/settings: expected a JSON Schema (an object or a boolean), found 3 (integer)"#,
            #"/process_types/a b/subscribe: expected an array of non-empty strings, found [1] (array)"#,
            #"/process_types/t/command/1: expected a non-empty string without NUL, found "" (string)"#,
            #"/process_types/t/input_schema: expected no "input_schema" (only a task has one), found one"#,
        ] {
            #expect(message.contains(expected), "missing \(expected) in \(message)")
        }
    }

    @Test func aSchemaThatDoesNotCompileIsRefusedAtItsLocation() {
        let message = problems(#"{"name": "weather", "version": "1", "protocol": "jsonl/1", "process_types": {"r": {"kind": "datasource", "command": ["x"], "settings": {"properties": {"a": {"pattern": "("}}}}}}"#)
        #expect(message.contains("/process_types/r/settings/properties/a/pattern: expected a JSON Schema that compiles"), "\(message)")
    }

    @Test func aManifestTooBigOrTooDeepIsRefusedUnread() {
        let big = #"{"name": "weather", "pad": ""# + String(repeating: "x", count: ModuleManifest.programManifestLimit) + #""}"#
        #expect(problems(big).contains("expected at most \(ModuleManifest.programManifestLimit) bytes"))
        let deep = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        let nested = #"{"name": "weather", "version": "1", "protocol": "jsonl/1", "process_types": {"r": {"kind": "datasource", "command": ["x"], "settings": {"default": \#(deep)}}}}"#
        #expect(problems(nested).contains("expected at most \(ModuleManifest.programManifestDepth) levels of nesting"), "\(problems(nested))")
        #expect(problems("{\"name\": ").contains("the manifest is not valid JSON"))
    }
}
