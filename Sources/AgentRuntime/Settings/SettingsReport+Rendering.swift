import AgentBase
import AgentCommands
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

    /// The report for tools (`validate-settings --json`, the `validate` command).
    public var json: JSONValue { (try? JSONValueEncoder().encode(document)) ?? .null }

    /// The report for tools, typed as the `validate` command answers it.
    package var document: ValidateCommand.Report {
        func issue(_ issue: SettingsIssue) -> ConfigurationCommands.Issue {
            ConfigurationCommands.Issue(file: issue.file, pointer: issue.pointer, message: issue.message, process: issue.process, followsFrom: issue.followsFrom)
        }
        return ValidateCommand.Report(
            file: file, valid: isValid, errors: blockingIssues.map(issue),
            modules: modules.map { module in
                ValidateCommand.Module(name: module.name, file: module.file, available: module.isAvailable, processTypes: module.processTypes,
                                       version: module.version,
                                       error: module.error.map { ConfigurationCommands.ModuleError(code: $0.code.rawValue, message: $0.message) })
            },
            processes: processes.map { process in
                ValidateCommand.Process(name: process.name, type: process.type, enabled: process.enabled, valid: process.isValid,
                                        errors: process.issues.map(issue), module: process.module, kind: process.kind)
            })
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
                let report = ValidateCommand.Report(file: options.settingsPath, valid: false, errors: [ConfigurationCommands.Issue(message: error.description)])
                print(((try? JSONValueEncoder().encode(report)) ?? .null).serialized(pretty: true))
            } else {
                Self.printError(error.description)
            }
            return error.exitCode
        }
    }
}
