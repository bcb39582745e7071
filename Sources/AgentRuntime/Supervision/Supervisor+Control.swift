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

    package func controlProcess(_ request: ProcessCommand.Request) -> Result<ProcessCommand.Answer, CommandError> {
        processCommand(request.action, name: request.name)
    }

    package func diagnostics() -> DiagnosticsCommand.Answer { Diagnostics.answer(for: self) }

    package func reloadSettings(respond: @escaping (Result<ReloadCommand.Answer, CommandError>) -> Void) {
        reload(respond: respond)
    }

    /// The refusal about a name that is not a process: `"code": "not_found"`, with the closest
    /// name.
    func unknownProcess(_ name: String) -> CommandError {
        let names = processes.map(\.name)
        return .notFound("no process named \"\(name)\"\(Suggestions.hint(for: name, in: names)); processes: \(names.joined(separator: ", "))")
    }

    /// `agent-control logs NAME`: the process's recent lines (see ``ProcessLog``).
    package func logs(_ request: ProcessLog.Request) -> Result<LogsCommand.Answer, CommandError> {
        if let page = processLog.read(request.name, after: request.after, since: request.since, limit: request.lines) {
            return .success(LogsCommand.Answer(page))
        }
        if let group = router.replicaGroups[request.name],
           let page = processLog.read(group.members.map(\.name), after: request.after, since: request.since, limit: request.lines) {
            return .success(LogsCommand.Answer(lines: page.lines.map { LogsCommand.Line($0.line, process: $0.name) }, next: page.next))
        }
        if disabledProcesses.contains(where: { $0.name == request.name }) {
            return .failure(.notFound("\(request.name) is disabled in the settings, so it has no log; set \"enabled\": true (or remove the key) and run `agent-control reload`"))
        }
        return .failure(unknownProcess(request.name))
    }

    /// `agent-control process start|stop|restart NAME`.
    func processCommand(_ action: ProcessCommand.Action, name: String) -> Result<ProcessCommand.Answer, CommandError> {
        if table.byName[name] == nil, let group = router.replicaGroups[name] { return replicaCommand(action, group: group) }
        guard let process = table.byName[name] else {
            if disabledProcesses.contains(where: { $0.name == name }) {
                return .failure(CommandError(.failed, "\(name) is disabled in the settings; set \"enabled\": true (or remove the key) and run `agent-control reload`"))
            }
            return .failure(unknownProcess(name))
        }
        guard !stopping else { return .failure(CommandError(.failed, "the agent is stopping")) }
        let metadata: Logger.Metadata = ["process": "\(name)"]
        switch action {
        case .start:
            if process.hasWorker {
                return .failure(CommandError(.failed, "\(name) is already \(process.state) (pid \(process.pid))"))
            }
            logger.notice("start requested over the control socket", metadata: metadata)
            record(process, "command", "start")
            cancelRestart(process)
            process.restartTimes = []
            process.consecutiveFailures = 0
            spawn(process)
            return .success(ProcessCommand.Answer(process: SupervisedProcessInfo(process)))
        case .stop:
            logger.notice("stop requested over the control socket", metadata: metadata)
            record(process, "command", "stop")
            cancelRestart(process)
            if process.hasWorker {
                stop(process)
            } else {
                setState(process, .stopped)
            }
            return .success(ProcessCommand.Answer(process: SupervisedProcessInfo(process)))
        case .restart:
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
            return .success(ProcessCommand.Answer(process: SupervisedProcessInfo(process)))
        }
    }

    func cancelRestart(_ process: SupervisedProcess) {
        table.pendingStarts.removeAll { $0 === process }
        if let timer = process.restartTimer {
            loop.cancel(timer)
            process.restartTimer = nil
        }
    }
}

extension Supervisor: @LoopActor SettingsCommandHost {
    package func settingsGet(respond: @escaping (Result<SettingsGetCommand.Answer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        respond(commands.get())
    }

    package func settingsChange(_ request: SettingsChangeCommand.Request, respond: @escaping (Result<SettingsChangeCommand.Answer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.change(request, supervisor: self, respond: respond)
    }

    package func validate(_ request: ValidateCommand.Request, respond: @escaping (Result<ValidateCommand.Answer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.check({ $0.validate(request) }, inbox: loop.inbox, respond: respond)
    }

    package func settingsResource(_ resource: SettingsResource, named name: String, respond: @escaping (Result<ResourceDefinition, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        respond(commands.resource(resource, named: name))
    }

    package func modules(respond: @escaping (Result<ModulesCommand.Answer, CommandError>) -> Void) {
        guard let commands = settingsHost.settingsCommands(respond: respond) else { return }
        commands.check({ $0.modules() }, inbox: loop.inbox, respond: respond)
    }
}
