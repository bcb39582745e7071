import AgentBase
import AgentCore
import JSONSchema
import Logging

extension SettingsReport {
    /// The report for a person: modules, processes, every error under its process.
    public var text: String {
        var lines: [String] = []
        lines.append("\(file): \(modules.count) module(s), \(processes.count) process(es)")
        if !generalIssues.isEmpty {
            lines.append("")
            lines.append("settings")
            lines += generalIssues.map { "  ✗ \($0.pointer.isEmpty ? "/" : $0.pointer): \($0.message)" }
        }
        lines.append("")
        lines.append("modules")
        if modules.isEmpty { lines.append("  (none enabled)") }
        for module in modules {
            if let error = module.error {
                lines.append("  ✗ \(module.name)  \(module.file)")
                lines.append("      \(error.message)")
            } else {
                lines.append("  ✓ \(module.name) \(module.version ?? "")  \(module.file)  (\(module.processTypes.joined(separator: ", ")))")
            }
        }
        lines.append("")
        lines.append("processes")
        if processes.isEmpty { lines.append("  (none configured)") }
        let width = min(24, processes.map(\.name.count).max() ?? 0)
        for process in processes {
            let mark = process.isValid ? (process.enabled ? "✓" : "-") : (process.enabled ? "✗" : "!")
            let name = process.name.padding(toLength: max(width, process.name.count), withPad: " ", startingAt: 0)
            let origin = process.module.map { "\(process.type) (\($0))" } ?? process.type
            let state = process.enabled ? "enabled" : "disabled"
            lines.append("  \(mark) \(name)  \(origin), \(state), \(process.isValid ? "valid" : "invalid")")
            for issue in process.issues { lines.append("      \(issue.pointer): \(issue.message)") }
        }
        lines.append("")
        let blocking = blockingIssues.count
        lines.append(blocking == 0 ? "settings are valid" : "\(blocking) error\(blocking == 1 ? "" : "s"); settings are invalid")
        return lines.joined(separator: "\n")
    }

    /// The report for tools.
    public var json: JSONValue {
        func issue(_ issue: SettingsIssue) -> JSONValue {
            var object: JSONObject = ["file": .string(issue.file), "pointer": .string(issue.pointer), "message": .string(issue.message)]
            if let process = issue.process { object["process"] = .string(process) }
            if let cause = issue.followsFrom { object["follows_from"] = .string(cause) }
            return .object(object)
        }
        return [
            "file": .string(file),
            "valid": .bool(isValid),
            "errors": .array(blockingIssues.map(issue)),
            "modules": .array(modules.map { module in
                var object: JSONObject = [
                    "name": .string(module.name), "file": .string(module.file), "available": .bool(module.isAvailable),
                    "process_types": .array(module.processTypes.map(JSONValue.string)),
                ]
                if let version = module.version { object["version"] = .string(version) }
                if let error = module.error { object["error"] = ["code": .string(error.code.rawValue), "message": .string(error.message)] }
                return .object(object)
            }),
            "processes": .array(processes.map { process in
                var object: JSONObject = [
                    "name": .string(process.name), "type": .string(process.type), "enabled": .bool(process.enabled),
                    "valid": .bool(process.isValid), "errors": .array(process.issues.map(issue)),
                ]
                if let module = process.module { object["module"] = .string(module) }
                if let kind = process.kind { object["kind"] = .string(kind) }
                return .object(object)
            }),
        ]
    }
}

extension AgentLauncher {
    /// Validates the settings and prints the report (text or JSON) to stdout. Returns 0 when
    /// valid, 2 when not.
    public func validate() -> Int32 {
        let logger = Logger(label: "agent") { AgentLogHandler(label: $0, fd: 2, level: options.logLevel) }
        do {
            let report = try prepare(logger: logger).report
            print(options.json ? report.json.serialized(pretty: true) : report.text)
            return report.isValid ? ExitCode.success : ExitCode.invalidConfiguration
        } catch {
            if options.json {
                print(JSONValue.object(["file": .string(options.settingsPath), "valid": false,
                                        "errors": [["message": .string(error.description)]]]).serialized(pretty: true))
            } else {
                Self.printError(error.description)
            }
            return error.exitCode
        }
    }
}
