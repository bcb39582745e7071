import AgentBase
import AgentCommands
import AgentLoop
import AgentWork
import AgentStore
import Foundation
import JSONSchema

extension Supervisor {
    /// The command layer for fronts other than the control socket (see ``CommandCenter``);
    /// made once, closed when the loop stops taking commands.
    public func makeCommandCenter(storePath: String?) -> CommandCenter {
        if let center = fronts.commandCenter { return center }
        let written = store.map { store in { @Sendable (done: @escaping @Sendable () -> Void) in store.whenWritten(done) } }
        let center = CommandCenter(inbox: loop.inbox, storePath: storePath, whenWritten: written, snapshot: { [unowned self] in takeSnapshot() }, handler: { [unowned self] request, caller, respond in
            execute(request, caller: caller, respond: respond)
        }, recorder: { [unowned self] caller, detail in
            store?.record(HistoryEntry(time: Date().timeIntervalSince1970, process: "", event: "audit", detail: "\(caller): \(detail)"))
        })
        fronts.commandCenter = center
        return center
    }

    /// Executes one checked command for any front, on the loop; mutating commands are recorded
    /// in the run history (who, what, result). Every front checks its requests with the
    /// registry (``CommandRegistry/check(_:)``), once.
    func execute(_ request: CheckedRequest, caller: CommandCenter.Caller, respond: @escaping (JSONValue) -> Void) {
        let finish: (JSONValue) -> Void = { [weak self] answer in
            let answer = CommandCenter.normalized(answer)
            if request.command.mutating, let self { audit(request.json, caller: caller, answer: answer) }
            respond(answer)
        }
        CommandRegistry.standard.run(request, caller: caller, hosts: self, respond: finish)
    }

    /// One line of the run history for a mutating command (see ``CommandAudit``).
    func audit(_ request: JSONValue, caller: CommandCenter.Caller, answer: JSONValue) {
        store?.record(CommandAudit.entry(request, caller: caller, answer: answer))
    }
}

extension Supervisor: @LoopActor CommandHosts {
    /// The object a typed command runs on.
    package func host<Host>(_ type: Host.Type) -> Host? {
        if type == TaskCoordinator.self { return work.tasks as? Host }
        if type == Scheduler.self { return work.scheduler as? Host }
        if type == WorkflowEngine.self { return work.workflows as? Host }
        if type == WorkHost.self { return work as? Host }
        if type == (any WorkflowDefinitionHost).self {
            guard let commands = settingsHost.commands else { return nil }
            return WorkflowDefinitionFile(commands: commands, supervisor: self) as any WorkflowDefinitionHost as? Host
        }
        if type == MemoryService.self { return memory as? Host }
        if type == FleetBridge.self { return fleetBridge as? Host }
        if type == (any SupervisionCommandHost).self || type == (any SettingsCommandHost).self { return self as? Host }
        if type == (any ChatCommandHost).self { return chat as? Host }
        if type == (any StoreReadHost).self { return self as? Host }
        return nil
    }
}

extension Supervisor: @LoopActor StoreReadHost {
    package var storePath: String? { store?.path }

    package func whenWritten(_ done: @escaping @Sendable () -> Void) {
        guard let store else { return done() }
        store.whenWritten(done)
    }
}
