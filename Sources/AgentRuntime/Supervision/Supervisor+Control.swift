import AgentBase
import AgentCommands
import AgentCore
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// Requests that answer later (chat, the settings commands, reload) or right away
    /// (everything else).
    func handleControl(_ request: JSONValue, respond: @escaping (JSONValue) -> Void) {
        switch request["command"]?.stringValue {
        case "chat"?, "chat_history"?, "chat_clear"?: chat.answer(request, respond: respond)
        case "settings_get"?, "settings_change"?, "validate"?, "modules"?: settingsHost.answer(request, supervisor: self, respond: respond)
        case "reload"?: reload(respond: respond)
        default: respond(handleControl(request))
        }
    }

    /// Answers one control request (see ``ControlServer``). Runs on the supervisor's loop.
    func handleControl(_ request: JSONValue) -> JSONValue {
        switch request["command"]?.stringValue {
        case "status"?:
            return takeSnapshot().statusAnswer
        case "metrics"?:
            return takeSnapshot().metricsAnswer
        case "readiness"?:
            if let refusal = Readiness.refusal(for: request) { return refusal }
            return Readiness(request).answer(for: takeSnapshot())
        case "stop"?:
            logger.notice("stop requested over the control socket")
            stopAll()
            return ["ok": true]
        case "reload"?:
            return reload()
        case "diagnostics"?:
            return Diagnostics.answer(for: self)
        case "process"?:
            // The registry checked both (strings, the action one of the three).
            guard let name = request["name"]?.stringValue, let action = request["action"]?.stringValue else {
                return CommandError.invalid("a process command needs \"action\" and \"name\" (strings)").json
            }
            return processCommand(action, name: name)
        case "logs"?:
            return logs(request)
        case let other:
            return CommandError.invalid("\(other ?? "?") is not a command of the supervisor").json
        }
    }

    /// The answer about a name that is not a process: `"code": "not_found"`, with the closest
    /// name.
    func unknownProcess(_ name: String) -> JSONValue {
        let names = processes.map(\.name)
        return ["ok": false, "code": "not_found", "error": .string("no process named \"\(name)\"\(Suggestions.hint(for: name, in: names)); processes: \(names.joined(separator: ", "))")]
    }

    /// `agent-control logs NAME`: the process's recent lines (see ``ProcessLog``).
    func logs(_ request: JSONValue) -> JSONValue {
        let parsed: ProcessLog.Request
        switch ProcessLog.Request.parse(request) {
        case .success(let request): parsed = request
        case .failure(let error): return error.json
        }
        if let answer = processLog.answer(parsed) { return answer }
        if let group = router.replicaGroups[parsed.name], let answer = processLog.answer(parsed, replicas: group.members.map(\.name)) { return answer }
        if disabledProcesses.contains(where: { $0.name == parsed.name }) {
            return ["ok": false, "code": "not_found", "error": .string("\(parsed.name) is disabled in the settings, so it has no log; set \"enabled\": true (or remove the key) and run `agent-control reload`")]
        }
        return unknownProcess(parsed.name)
    }

    /// `agent-control process start|stop|restart NAME`.
    func processCommand(_ action: String, name: String) -> JSONValue {
        if table.byName[name] == nil, let group = router.replicaGroups[name] { return replicaCommand(action, group: group) }
        guard let process = table.byName[name] else {
            if disabledProcesses.contains(where: { $0.name == name }) {
                return ["ok": false, "error": .string("\(name) is disabled in the settings; set \"enabled\": true (or remove the key) and run `agent-control reload`")]
            }
            return unknownProcess(name)
        }
        guard !stopping else { return ["ok": false, "error": "the agent is stopping"] }
        let metadata: Logger.Metadata = ["process": "\(name)"]
        switch action {
        case "start":
            if process.hasWorker {
                return ["ok": false, "error": .string("\(name) is already \(process.state) (pid \(process.pid))")]
            }
            logger.notice("start requested over the control socket", metadata: metadata)
            record(process, "command", "start")
            cancelRestart(process)
            process.restartTimes = []
            process.consecutiveFailures = 0
            spawn(process)
            return ["ok": true, "process": snapshot(of: process)]
        case "stop":
            logger.notice("stop requested over the control socket", metadata: metadata)
            record(process, "command", "stop")
            cancelRestart(process)
            if process.hasWorker {
                stop(process)
            } else {
                setState(process, .stopped)
            }
            return ["ok": true, "process": snapshot(of: process)]
        case "restart":
            logger.notice("restart requested over the control socket", metadata: metadata)
            record(process, "command", "restart")
            cancelRestart(process)
            process.restartTimes = []
            process.consecutiveFailures = 0
            if process.hasWorker {
                // Several restarts asked while it stops start it once: a second worker would
                // replace the first's record and leave it running unsupervised.
                process.onStopped.append { [unowned self, unowned process] in
                    if !stopping, !process.hasWorker { spawn(process) }
                }
                stop(process)
            } else {
                spawn(process)
            }
            return ["ok": true, "process": snapshot(of: process)]
        default:
            return ["ok": false, "error": .string("unknown process action \"\(action)\"; known: start, stop, restart")]
        }
    }

    func cancelRestart(_ process: SupervisedProcess) {
        table.pendingStarts.removeAll { $0 === process }
        if let timer = process.restartTimer {
            loop.cancel(timer)
            process.restartTimer = nil
        }
    }

    func snapshot(of process: SupervisedProcess) -> JSONValue { SupervisedProcessInfo(process).json }
}
