import AgentCommands
import AgentStore
import Foundation
import JSONSchema

/// The run history's line for a mutating command: who asked, what, and the result.
enum CommandAudit {
    /// The `audit` entry for `request` from `caller`, answered with `answer`.
    static func entry(_ request: JSONValue, caller: CommandCenter.Caller, answer: JSONValue) -> HistoryEntry {
        var what = request["command"]?.stringValue ?? "?"
        if let action = request["action"]?.stringValue { what += " " + action }
        if let name = request["name"]?.stringValue { what += " " + name }
        if let key = request["key"]?.stringValue, what.hasPrefix("memory_") {
            what += " " + (request["run"]?.stringValue.map { "run:\($0) " } ?? "") + key
        }
        if what.hasPrefix("workflow_") {
            // Who approved or rejected what, and why: the approval's audit trail.
            for key in ["id", "step"] { if let value = request[key]?.stringValue { what += " " + value } }
            if let comment = request["comment"]?.stringValue, !comment.isEmpty { what += " (comment: \(comment.prefix(200)))" }
        }
        if what == "event_publish" {
            // What was published, by whom: the payload is in the event log.
            what += " " + String((request["type"]?.stringValue ?? "?").prefix(200))
            if let source = request["source"]?.stringValue { what += " as " + String(source.prefix(200)) }
        }
        let ok = answer["ok"]?.boolValue == true
        var result = ok ? "ok" : "refused: " + (answer["error"]?.stringValue ?? "?")
        var process = request["name"]?.stringValue ?? ""
        if request["command"] == "settings_change" {
            (what, process) = SettingsCommands.audited(request)
            result = SettingsCommands.outcome(answer)
        }
        return HistoryEntry(time: Date().timeIntervalSince1970, process: process,
                            event: "audit", detail: "\(caller): \(what) → \(result.prefix(300))")
    }
}
