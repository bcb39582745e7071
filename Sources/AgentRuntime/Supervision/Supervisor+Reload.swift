import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

extension Supervisor {
    /// Re-reads and validates the settings, then applies only the differences: unchanged
    /// processes keep running with the same pid, changed ones restart, removed ones stop, new
    /// ones start. Invalid settings are refused and nothing changes.
    func reload() -> Result<ReloadCommand.Answer, CommandError> {
        guard !stopping else { return .failure(ReloadCommand.stopping) }
        guard let reloader = settingsHost.reloader else { return .failure(CommandError(.failed, "this agent cannot reload its settings")) }
        logger.notice("reloading the settings")
        systemd.reloadBegan(stopping: stopping)
        let report: SettingsReport
        switch reloader() {
        case .failure(let error):
            logger.error("reload refused: \(error); the running configuration stays")
            systemd.reloadEnded(applied: false, status: serviceStatus)
            return .failure(ReloadCommand.failed(error.description))
        case .success(let checked):
            report = checked
        }
        let answer = applyReload(report)
        systemd.reloadEnded(applied: (try? answer.get()) != nil, status: serviceStatus)
        return answer
    }

    /// `reload` as the fronts and SIGHUP ask it: with the settings commands (an agent started
    /// from a settings file), the file is checked off the loop, so that routing goes on while
    /// modules are described; `respond` is called on the loop with the same answer as
    /// ``reload()``.
    func reload(respond: @escaping (Result<ReloadCommand.Answer, CommandError>) -> Void) {
        guard !stopping else { return respond(.failure(ReloadCommand.stopping)) }
        guard let settingsCommands = settingsHost.commands else { return respond(reload()) }
        logger.notice("reloading the settings")
        systemd.reloadBegan(stopping: stopping)
        settingsCommands.reload(inbox: inbox) { [weak self] checked in
            guard let self else { return }
            switch checked {
            case .failure(let error):
                logger.error("reload refused: \(error); the running configuration stays")
                systemd.reloadEnded(applied: false, status: serviceStatus)
                respond(.failure(ReloadCommand.failed(error.description)))
            case .success(let prepared):
                let answer = applyReload(prepared.report)
                systemd.reloadEnded(applied: (try? answer.get()) != nil, status: serviceStatus)
                respond(answer)
            }
        }
    }

    /// Applies a checked report as a reload: refused (everything running stays) when it is
    /// not valid. Settings commands apply the report they checked before writing the file.
    func applyReload(_ report: SettingsReport) -> Result<ReloadCommand.Answer, CommandError> {
        guard !stopping else { return .failure(ReloadCommand.stopping) }
        guard report.isValid else {
            let issues = report.blockingIssues
            let list = ReloadCommand.shownErrors(issues.map(\.description)).map { "  \($0)" }.joined(separator: "\n")
            logger.error("reload refused, \(issues.count) error(s); the running configuration stays:\n\(list)")
            return .failure(ReloadCommand.refused(issues))
        }
        let changes = apply(report.planned)
        // A module no longer enabled needs no spare (executors of its tasks still running end
        // without a restart).
        spares.keepOnly(Set(report.modules.map(\.file) + processes.filter { !$0.isTaskExecutor }.map(\.module.library)))
        console.logFile?.configure(report.log)
        work.apply(report.workDefinitions)
        disabledProcesses = report.disabledProcesses
        if settingsHost.httpCredentials?.replace(with: report.http) == true {
            logger.notice("reload: the HTTP tokens and users changed; each request is checked against the new ones (a removed user's sessions end)")
        }
        logger.notice("reloaded: \(changes.kept.count) kept, \(changes.restarted.count) restarted, \(changes.started.count) started, \(changes.stopped.count) stopped")
        for note in report.reloadNotes { logger.warning("reload: \(note)") }
        return .success(ReloadCommand.Answer(kept: changes.kept, restarted: changes.restarted, started: changes.started, stopped: changes.stopped,
                                             notes: report.reloadNotes))
    }

    /// Replaces the set of processes with `planned`, touching only what differs.
    @discardableResult
    func apply(_ planned: [PlannedProcess]) -> (kept: [String], restarted: [String], started: [String], stopped: [String]) {
        var kept: [String] = [], restarted: [String] = [], started: [String] = [], stopped: [String] = []
        // Task executors are not in the settings' processes: a reload leaves them be.
        let executors = processes.filter(\.isTaskExecutor)
        let previous = Dictionary(processes.filter { !$0.isTaskExecutor }.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        var next: [SupervisedProcess] = []
        var toStart: [SupervisedProcess] = []
        for plan in planned {
            if let existing = previous[plan.name] {
                if existing.planned == plan {
                    next.append(existing)
                    kept.append(plan.name)
                    continue
                }
                let fresh = SupervisedProcess(plan)
                fresh.savedState = existing.savedState
                next.append(fresh)
                restarted.append(plan.name)
                guard existing.hasWorker || existing.awaitsPredecessor else {
                    // Nothing to wait for (stopped, failed, in backoff): started in turns.
                    retire(existing, then: nil)
                    toStart.append(fresh)
                    continue
                }
                // Starts the process of that name the settings hold once the old worker is
                // gone: a reload since may have replaced `fresh` (it then waits for this same
                // worker) or removed it.
                fresh.awaitsPredecessor = true
                let name = plan.name
                retire(existing) { [unowned self] in
                    guard !stopping, let current = processes.first(where: { !$0.isTaskExecutor && $0.name == name }),
                          current.awaitsPredecessor, !current.hasWorker else { return }
                    spawn(current)
                }
            } else {
                let fresh = SupervisedProcess(plan)
                next.append(fresh)
                toStart.append(fresh)
                started.append(plan.name)
            }
        }
        for (name, existing) in previous where !planned.contains(where: { $0.name == name }) {
            stopped.append(name)
            retire(existing, then: nil)
        }
        setProcesses(next + executors)
        startInTurns(toStart)
        queries.start(processes)
        return (kept, restarted, started, stopped.sorted())
    }

    /// Stops a process that is being replaced or removed; `then` runs once its worker is gone.
    /// A replacement that never started, waiting for its own predecessor's worker, has none:
    /// that worker's end starts the process the settings now hold.
    private func retire(_ process: SupervisedProcess, then: (() -> Void)?) {
        cancelRestart(process)
        guard process.hasWorker else {
            if !process.awaitsPredecessor { then?() }
            return
        }
        table.retire(process)
        process.onStopped.append { [unowned self, unowned process] in
            table.retired(process)
            then?()
        }
        stop(process)
    }
}
