import AgentCommands
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

extension Supervisor {
    /// Copies what `status`, `metrics` and `readiness` report (see ``AgentSnapshot``). On the
    /// loop; builds no JSON and reads nothing from /proc.
    package func takeSnapshot() -> AgentSnapshot {
        // A SIGCHLD that reached a thread other than the loop's is not lost for status.
        checkStops()
        let now = EventLoop.now()
        let entries = processes.map { process -> AgentSnapshot.Process in
            var replacing: SupervisedProcessInfo?
            if !process.hasWorker, let old = table.retiring.first(where: { $0.name == process.name && $0.hasWorker }) {
                replacing = SupervisedProcessInfo(old)
            }
            return AgentSnapshot.Process(
                info: SupervisedProcessInfo(process), replacing: replacing,
                restartFollows: replacing != nil || !process.onStopped.isEmpty,
                wasEverReady: process.wasEverReady, failureTimes: process.failureTimes,
                restartPolicy: process.policy.restart.rawValue)
        }
        let counters = table.counters
        var totals = AgentSnapshot.Totals()
        totals.eventsEmitted = counters.eventsEmitted
        totals.eventsDelivered = counters.eventsDelivered
        totals.eventsDropped = counters.eventsDropped
        totals.restarts = counters.restarts
        var snapshot = AgentSnapshot(
            pid: getpid(), takenAt: now, uptime: now - startedAt, stopping: stopping,
            processes: entries, disabled: disabledProcesses,
            store: store?.statistics, storePath: store?.path,
            outputs: outputs?.statistics ?? [], forkServer: forkServers.status,
            totals: totals, chatRequests: chat.sequence)
        snapshot.tasks = work.tasks?.figures ?? []
        snapshot.loop = .init(longestTurn: loop.longestTurn, slowTurns: loop.slowTurns)
        snapshot.frontsStarting = fronts.starting
        snapshot.notifications = work.notifier?.statistics
        snapshot.schedules = work.scheduler?.figures ?? []
        snapshot.assignment = work.tasks?.assignmentFigures
        if let fleet = fleetBridge.statusFigures {
            snapshot.fleet = fleet.json
            snapshot.fleetDegraded = fleet.degraded
        }
        return snapshot
    }

    /// The store's figures, as `status` shows them.
    var storeStatus: JSONValue { AgentSnapshot.storeJSON(store?.statistics, path: store?.path) }
}
