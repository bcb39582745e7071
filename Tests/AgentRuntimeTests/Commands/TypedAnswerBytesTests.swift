@testable import AgentBase
@testable import AgentCommands
@testable import AgentRuntime
@testable import AgentSupervision
import AgentTestSupport
import JSONSchema
import Testing

/// The root-hosted commands answer typed values now; each encodes to the bytes its host wrote
/// as a dictionary before (the members in the same order), written out here as the old hosts
/// built them.
@Suite(.ownThreads) struct TypedAnswerBytesTests {
    static func text<T: Encodable>(_ answer: T) throws -> String { try JSONValueEncoder().encode(answer).serialized() }

    @Test func reloadAndSettingsChangeAnswersKeepTheirBytes() throws {
        let applied = ReloadCommand.Answer(kept: ["a"], restarted: ["b"], started: [], stopped: ["c"], notes: ["n"])
        let reload: JSONValue = ["ok": true, "kept": ["a"], "restarted": ["b"], "started": [], "stopped": ["c"], "notes": ["n"]]
        #expect(try Self.text(applied) == reload.serialized())
        let written: JSONValue = ["ok": true, "kept": ["a"], "restarted": ["b"], "started": [], "stopped": ["c"], "notes": ["n"],
                                  "changed": true, "path": "/a/settings.json", "hash": "9f2c"]
        #expect(try Self.text(SettingsChangeCommand.Answer(path: "/a/settings.json", hash: "9f2c", applied: applied)) == written.serialized())
        let unchanged: JSONValue = ["ok": true, "changed": false, "path": "/a/settings.json", "hash": "9f2c",
                                    "message": "the settings already say so: nothing was written, nothing reloaded"]
        #expect(try Self.text(SettingsChangeCommand.Answer(path: "/a/settings.json", hash: "9f2c",
                                                           unchanged: "the settings already say so: nothing was written, nothing reloaded")) == unchanged.serialized())
    }

    @Test func settingsGetValidateAndModulesAnswersKeepTheirBytes() throws {
        let get: JSONValue = ["ok": true, "path": "/a/s.json", "hash": "h", "text": "{", "settings": .null, "parse_error": "bad"]
        #expect(try Self.text(SettingsGetCommand.Answer(path: "/a/s.json", hash: "h", text: "{", settings: .null, parseError: "bad")) == get.serialized())

        let report = ValidateCommand.Report(file: "s.json", valid: false, errors: [ConfigurationCommands.Issue(file: "s.json", pointer: "/p", message: "m", process: "x")],
                                            modules: [ValidateCommand.Module(name: "feeds", file: "f.so", available: true, processTypes: ["t"], version: "1")],
                                            processes: [ValidateCommand.Process(name: "x", type: "t", enabled: true, valid: false,
                                                                                errors: [ConfigurationCommands.Issue(file: "s.json", pointer: "/p", message: "m")], module: "feeds")])
        let full: JSONValue = [
            "file": "s.json", "valid": false, "errors": [["file": "s.json", "pointer": "/p", "message": "m", "process": "x"]],
            "modules": [["name": "feeds", "file": "f.so", "available": true, "process_types": ["t"], "version": "1"]],
            "processes": [["name": "x", "type": "t", "enabled": true, "valid": false, "errors": [["file": "s.json", "pointer": "/p", "message": "m"]], "module": "feeds"]],
            "ok": true,
        ]
        #expect(try Self.text(ValidateCommand.Answer(report)) == full.serialized())
        let notJSON: JSONValue = ["ok": true, "file": "s.json", "valid": false, "errors": [["file": "s.json", "pointer": "", "message": "not valid JSON"]]]
        #expect(try Self.text(ValidateCommand.Answer(ValidateCommand.Report(file: "s.json", valid: false, errors: [
            ConfigurationCommands.Issue(file: "s.json", pointer: "", message: "not valid JSON"),
        ]))) == notJSON.serialized())

        let modules = ModulesCommand.Answer(file: "s.json", modules: [
            ModulesCommand.Module(name: "feeds", file: "f.so", available: false, error: ConfigurationCommands.ModuleError(code: "load_failed", message: "no"), processTypes: []),
            ModulesCommand.Module(name: "chat", file: "builtin", available: true, version: "1.0", builtin: true,
                                  processTypes: [ModulesCommand.ProcessType(type: "chatbot", kind: "service", description: "d", settingsSchema: [:], subscribes: ["chat.message"])]),
        ], hostSchema: ["type": "object"])
        let modulesJSON: JSONValue = ["ok": true, "file": "s.json", "modules": [
            ["name": "feeds", "file": "f.so", "available": false, "error": ["code": "load_failed", "message": "no"], "process_types": []],
            ["name": "chat", "file": "builtin", "available": true, "version": "1.0", "builtin": true,
             "process_types": [["type": "chatbot", "kind": "service", "description": "d", "settings_schema": [:], "subscribes": ["chat.message"]]]],
        ], "host_schema": ["type": "object"]]
        #expect(try Self.text(modules) == modulesJSON.serialized())
    }

    @Test func processLogsAndChatAnswersKeepTheirBytes() throws {
        let info = SupervisedProcessInfo(name: "fetcher", type: "fetch", module: "feeds", state: .stopped)
        #expect(try Self.text(ProcessCommand.Answer(process: info)) == JSONValue.object(["ok": true, "process": info.json]).serialized())
        #expect(try Self.text(ProcessCommand.Answer(processes: [info])) == JSONValue.object(["ok": true, "processes": [info.json]]).serialized())

        let line = ProcessLog.Line(seq: 7, time: 1_700_000_000_000_000_000, stream: .stderr, text: "oops")
        var replica = line.json.objectValue ?? [:]
        replica["process"] = "fetcher#2"
        let logs: JSONValue = ["ok": true, "lines": [line.json, .object(replica)], "next": 9]
        #expect(try Self.text(LogsCommand.Answer(lines: [LogsCommand.Line(line), LogsCommand.Line(line, process: "fetcher#2")], next: 9)) == logs.serialized())

        let chat: JSONValue = ["ok": true, "text": "all run", "adapter": "status", "confidence": 0.75]
        #expect(try Self.text(ChatCommand.Answer(text: "all run", adapter: "status", confidence: 0.75)) == chat.serialized())
        let row: JSONValue = ["id": 4, "time": "2023-11-14T22:13:20.250Z", "conversation": "ops", "user": "ann", "role": "user", "source": "", "text": "status?"]
        let lines = try JSONValueDecoder().decode([ChatHistoryCommand.Line].self, from: [row])
        #expect(try Self.text(ChatHistoryCommand.Answer(lines: lines)) == JSONValue.object(["ok": true, "lines": [row]]).serialized())
    }
}
