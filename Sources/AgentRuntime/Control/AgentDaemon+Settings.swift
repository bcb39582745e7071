import AgentBase
import AgentCommands
import AgentCore
import Foundation
import JSONSchema

extension AgentDaemon {
    /// `agent-control settings show`: the settings file as the running agent reads it
    /// (`${env:NAME}` references as written), or the whole answer with `--json` (path, hash).
    public func settingsShow(json: Bool) -> Int32 {
        send(SettingsGetCommand.request(NoFields()), timeout: 30) { answer in
            if json {
                print(answer.serialized(pretty: true))
            } else {
                let text = answer["text"]?.stringValue ?? ""
                print(text, terminator: text.hasSuffix("\n") ? "" : "\n")
                FileHandle.standardError.write(Data("# \(answer["path"]?.stringValue ?? "?") (hash \(answer["hash"]?.stringValue ?? "?"))\n".utf8))
            }
        }
    }

    /// `agent-control task|schedule|executor get NAME`: the definition as the file has it
    /// (`${env:NAME}` references as written), the file's hash on standard error; or the whole
    /// answer with `--json`.
    public func resourceShow(_ request: JSONValue, json: Bool) -> Int32 {
        send(request, timeout: 30) { answer in
            guard !json else { return print(answer.serialized(pretty: true)) }
            print((answer["definition"] ?? .null).serialized(pretty: true))
            FileHandle.standardError.write(Data("# \(answer["name"]?.stringValue ?? "?") (settings hash \(answer["hash"]?.stringValue ?? "?"))\n".utf8))
        }
    }

    /// `agent-control settings enable-module|…|set-process`: one change through the agent
    /// (checked, written, reloaded). Exit status 2 when the change would make the settings
    /// invalid (every error printed; nothing written), 1 when refused otherwise.
    package func settingsChange(_ change: SettingsChangeCommand.Change, ifMatch: String?) -> Int32 {
        self.change(SettingsChangeCommand.request(.init(change, ifMatch: ifMatch)))
    }

    /// A change of the settings through the agent: `settings_change`, or a command that stands
    /// for one (`workflow_create`, …); printed and exiting as ``settingsChange(_:ifMatch:)``.
    public func change(_ request: JSONValue) -> Int32 {
        send(request, timeout: 120) { answer in
            guard answer["changed"] == true else {
                return Self.say("no change: \(answer["message"]?.stringValue ?? "the settings already say so")")
            }
            func names(_ key: String) -> String {
                let list = answer[key]?.arrayValue?.compactMap(\.stringValue) ?? []
                return list.isEmpty ? "-" : list.joined(separator: ", ")
            }
            Self.say("written \(answer["path"]?.stringValue ?? "settings") and reloaded. kept: \(names("kept")); restarted: \(names("restarted")); started: \(names("started")); stopped: \(names("stopped"))")
            for note in answer["notes"]?.arrayValue?.compactMap(\.stringValue) ?? [] { Self.say("note: \(note)") }
        }
    }

    /// `agent-control modules`: the enabled modules, their process types and kinds (with
    /// `--json`, each type's settings schema too).
    public func modules(json: Bool) -> Int32 {
        send(ModulesCommand.request(NoFields()), timeout: 120) { answer in
            guard !json else { return print(answer.serialized(pretty: true)) }
            print(ModulesTable.render(answer))
        }
    }

    /// `agent-control diagnostics`: versions, paths, store, fork server, outputs, task notifications, limits.
    public func diagnostics(json: Bool) -> Int32 {
        send(DiagnosticsCommand.request(NoFields()), timeout: 30) { answer in
            guard !json else { return print(answer.serialized(pretty: true)) }
            print(DiagnosticsText.render(answer))
        }
    }

    /// Sends a request; prints a refusal (with its errors) and returns its exit status, or
    /// hands the answer to `show`.
    private func send(_ request: JSONValue, timeout: Double, show: (JSONValue) -> Void) -> Int32 {
        let answer: JSONValue
        do {
            answer = try ControlClient.send(request, paths: paths, timeout: timeout)
        } catch {
            return Self.fail(error)
        }
        guard answer["ok"] == true else {
            let code = answer["code"]?.stringValue
            var text = answer["error"]?.stringValue ?? "the agent refused the request"
            let errors = answer["errors"]?.arrayValue ?? []
            if code == "invalid", errors.contains(where: { $0["file"] != nil }) {
                text = "the change would make the settings invalid; nothing was written:\n" + errors.map { error in
                    let pointer = error["pointer"]?.stringValue ?? ""
                    let file = error["file"]?.stringValue.map { "\($0): " } ?? ""
                    return "  \(file)\(pointer.isEmpty ? "/" : pointer): \(error["message"]?.stringValue ?? "")"
                }.joined(separator: "\n")
            }
            return Self.fail(text, code: code == "invalid" ? AgentLauncher.ExitCode.invalidConfiguration : AgentLauncher.ExitCode.failure)
        }
        show(answer)
        return AgentLauncher.ExitCode.success
    }
}

/// `agent-control modules`.
enum ModulesTable {
    static func render(_ answer: JSONValue) -> String {
        var lines: [String] = []
        for module in answer["modules"]?.arrayValue ?? [] {
            let name = module["name"]?.stringValue ?? "?"
            let version = module["version"]?.stringValue.map { " \($0)" } ?? ""
            let origin = module["builtin"] == true ? "(built in)" : module["file"]?.stringValue ?? ""
            lines.append("\(name)\(version)  \(origin)")
            if let error = module["error"]?["message"]?.stringValue {
                lines.append("  not available: \(error)")
                continue
            }
            let types = module["process_types"]?.arrayValue ?? []
            let width = types.map { ($0["type"]?.stringValue ?? "").count }.max() ?? 0
            for type in types {
                let typeName = (type["type"]?.stringValue ?? "?").padding(toLength: width, withPad: " ", startingAt: 0)
                let kind = (type["kind"]?.stringValue ?? "?").padding(toLength: 14, withPad: " ", startingAt: 0)
                lines.append("  \(typeName)  \(kind)  \(type["description"]?.stringValue ?? "")")
            }
        }
        return lines.isEmpty ? "no module is enabled" : lines.joined(separator: "\n")
    }
}

/// `agent-control diagnostics`: each section's keys and values, nested objects flattened.
enum DiagnosticsText {
    static func render(_ answer: JSONValue) -> String {
        var lines: [String] = []
        for section in ["versions", "agent", "paths", "store", "fork_server", "notifications", "limits"] {
            guard let object = answer[section]?.objectValue else { continue }
            lines.append(section.replacingOccurrences(of: "_", with: " "))
            for (key, value) in flatten(object) { lines.append("  \(key): \(value)") }
        }
        let outputs = answer["outputs"]?.arrayValue ?? []
        lines.append("outputs")
        if outputs.isEmpty { lines.append("  (none)") }
        for output in outputs {
            var line = "  \(output["name"]?.stringValue ?? "?") (\(output["type"]?.stringValue ?? "?")): delivered \(output["delivered"]?.serialized() ?? "0"), dropped \(output["dropped"]?.serialized() ?? "0"), queued \(output["queued"]?.serialized() ?? "0")"
            if let error = output["last_error"]?.stringValue { line += "; last error: \(error)" }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }

    static func flatten(_ object: JSONObject, prefix: String = "") -> [(String, String)] {
        object.flatMap { key, value -> [(String, String)] in
            if let inner = value.objectValue { return flatten(inner, prefix: prefix + key + ".") }
            return [(prefix + key, value.stringValue ?? (value.isNull ? "-" : value.serialized()))]
        }
    }
}
