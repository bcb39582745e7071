import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

extension Supervisor: ExecutorHost {
    /// Starts a task executor worker: a module's task handler for `type`, made from
    /// `settings`, shown by `status` as `name`. It is spawned like every worker (fork server,
    /// containment, the same fds) and never restarted: its runner decides what its end means.
    /// Loop thread.
    /// `stopTimeout`: seconds its handlers get to end when it is stopped (the task's
    /// `cancel_grace`), then SIGKILL.
    package func startExecutor(name: String, module: ModuleLocation, type: String, settings: JSONObject, stopTimeout: Double = 2) -> SupervisedProcess {
        var policy = ProcessPolicy()
        policy.restart = .never
        policy.maximumRestarts = nil
        policy.stopTimeout = stopTimeout
        let process = SupervisedProcess(PlannedProcess(name: name, type: type, kind: "task", module: module, settings: settings,
                                                       subscriptions: [], policy: policy))
        setProcesses(processes + [process])
        spawn(process)
        return process
    }

    /// Forgets an executor whose worker is gone (its counters stay in the totals).
    package func removeExecutor(_ process: SupervisedProcess) {
        guard !process.hasWorker, processes.contains(where: { $0 === process }) else { return }
        setProcesses(processes.filter { $0 !== process })
    }

    /// Whether the agent is stopping (no executor is started then).
    package var isStopping: Bool { stopping }
}
