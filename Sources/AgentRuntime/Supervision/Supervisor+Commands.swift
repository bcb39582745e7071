import AgentCommands
import AgentStore
import Foundation
import JSONSchema

extension Supervisor {
    /// The command layer for fronts other than the control socket (see ``CommandCenter``);
    /// made once, closed when the loop stops taking commands.
    public func makeCommandCenter(storePath: String?) -> CommandCenter {
        if let commandCenter { return commandCenter }
        let center = CommandCenter(inbox: loop.inbox, storePath: storePath, snapshot: { [unowned self] in takeSnapshot() }, handler: { [unowned self] request, caller, respond in
            execute(request, caller: caller, respond: respond)
        }, recorder: { [unowned self] caller, detail in
            store?.record(HistoryEntry(time: Date().timeIntervalSince1970, process: "", event: "audit", detail: "\(caller): \(detail)"))
        })
        commandCenter = center
        return center
    }

    /// Executes one command for any front, on the loop; mutating commands are recorded in the
    /// run history (who, what, result).
    func execute(_ request: JSONValue, caller: CommandCenter.Caller, respond: @escaping (JSONValue) -> Void) {
        let name = request["command"]?.stringValue ?? ""
        let audited = CommandCatalog.isMutating(name)
        let finish: (JSONValue) -> Void = { [weak self] answer in
            let answer = CommandCenter.normalized(answer)
            if audited, let self { audit(request, caller: caller, answer: answer) }
            respond(answer)
        }
        if name.hasPrefix("task_") || name.hasPrefix("executor_") { return work.answerTask(request, caller: caller, respond: finish) }
        if name.hasPrefix("schedule_") { return work.answerSchedule(request, respond: finish) }
        if name.hasPrefix("memory_") { return memory.answerCommand(request, respond: finish) }
        if name.hasPrefix("workflow_") { return workflowCommand(request, caller: caller, respond: finish) }
        if name == "fleet_status" { return fleetBridge.status(respond: finish) }
        handleControl(request, respond: finish)
    }

    /// The workflow commands, on the loop: the definitions' are the settings file's, the runs'
    /// the engine's.
    private func workflowCommand(_ request: JSONValue, caller: CommandCenter.Caller, respond: @escaping (JSONValue) -> Void) {
        guard let command = request["command"]?.stringValue, SettingsCommands.workflowDefinitionCommands.contains(command) else {
            return work.answerWorkflow(request, caller: caller, respond: respond)
        }
        guard let settingsCommands else {
            return respond(["ok": false, "code": "unavailable", "error": "this agent was not started from a settings file: its workflow definitions cannot be read or changed here"])
        }
        if command != "workflow_get", stopping { return respond(CommandCenter.stoppingAnswer) }
        settingsCommands.answerWorkflow(request, supervisor: self, respond: respond)
    }

    /// One line of the run history for a mutating command: who asked, what, and the result.
    func audit(_ request: JSONValue, caller: CommandCenter.Caller, answer: JSONValue) {
        guard let store else { return }
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
        let ok = answer["ok"]?.boolValue == true
        var result = ok ? "ok" : "refused: " + (answer["error"]?.stringValue ?? "?")
        var process = request["name"]?.stringValue ?? ""
        if request["command"] == "settings_change" {
            (what, process) = SettingsCommands.audited(request)
            result = SettingsCommands.outcome(answer)
        }
        store.record(HistoryEntry(time: Date().timeIntervalSince1970, process: process,
                                  event: "audit", detail: "\(caller): \(what) → \(result.prefix(300))"))
    }
}
