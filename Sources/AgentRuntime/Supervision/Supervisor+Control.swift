import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor: @LoopActor SupervisionCommandHost {
    package func stopAgent() {
        logger.notice("stop requested over the control socket")
        stopAll()
    }

    package func controlProcess(_ request: ProcessCommand.Request) -> Result<EncodedAnswer, CommandError> {
        EncodedAnswer.result(processCommand(request.action.rawValue, name: request.name))
    }

    package func diagnostics() -> EncodedAnswer { EncodedAnswer(Diagnostics.answer(for: self)) }

    package func reloadSettings(respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        reload { respond(EncodedAnswer.result($0)) }
    }

    /// The answer about a name that is not a process: `"code": "not_found"`, with the closest
    /// name.
    func unknownProcess(_ name: String) -> JSONValue {
        let names = processes.map(\.name)
        return ["ok": false, "code": "not_found", "error": .string("no process named \"\(name)\"\(Suggestions.hint(for: name, in: names)); processes: \(names.joined(separator: ", "))")]
    }

    /// `agent-control logs NAME`: the process's recent lines (see ``ProcessLog``).
    package func logs(_ request: ProcessLog.Request) -> Result<EncodedAnswer, CommandError> {
        if let answer = processLog.answer(request) { return .success(EncodedAnswer(answer)) }
        if let group = router.replicaGroups[request.name], let answer = processLog.answer(request, replicas: group.members.map(\.name)) {
            return .success(EncodedAnswer(answer))
        }
        if disabledProcesses.contains(where: { $0.name == request.name }) {
            return .failure(.notFound("\(request.name) is disabled in the settings, so it has no log; set \"enabled\": true (or remove the key) and run `agent-control reload`"))
        }
        return EncodedAnswer.result(unknownProcess(request.name))
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

extension Supervisor: @LoopActor SettingsCommandHost {
    package func settingsGet(respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        respond(EncodedAnswer.result(commands.get()))
    }

    package func settingsChange(_ request: SettingsChangeCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.change(request, supervisor: self) { respond(EncodedAnswer.result($0)) }
    }

    package func validate(_ request: ValidateCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.check({ $0.validate(request) }, inbox: loop.inbox) { respond(EncodedAnswer.result($0)) }
    }

    package func modules(respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.check({ $0.modules() }, inbox: loop.inbox) { respond(EncodedAnswer.result($0)) }
    }
}
