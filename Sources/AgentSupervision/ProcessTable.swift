import AgentLoop

/// The supervised processes: the configured ones (found by name), those a reload retires
/// until their workers are gone, those waiting for their first start, the disabled ones, and
/// the counters of the processes gone, so that the agent's totals only grow.
@LoopActor
package final class ProcessTable {
    /// Events and restarts counted over processes.
    package struct Counters: Equatable {
        package var eventsEmitted = 0
        package var eventsDelivered = 0
        package var eventsDropped = 0
        package var restarts = 0

        package init() {}

        @LoopActor mutating func add(_ process: SupervisedProcess) {
            eventsEmitted += process.eventsEmitted
            eventsDelivered += process.eventsDelivered
            eventsDropped += process.eventsDropped
            restarts += process.restarts
        }
    }

    package private(set) var processes: [SupervisedProcess] = []
    package private(set) var byName: [String: SupervisedProcess] = [:]
    /// Processes removed or replaced by a reload, until their workers are gone.
    package private(set) var retiring: [SupervisedProcess] = []
    /// Processes waiting for their first start (one is started per loop turn).
    package var pendingStarts: [SupervisedProcess] = []
    /// Processes the settings list with `"enabled": false`: not run, but shown by `status`
    /// as `disabled` (set at start and by each reload).
    package var disabled: [DisabledProcess] = []
    /// The counters of processes that reloads removed or replaced.
    private var retiredCounters = Counters()

    package init() {}

    /// Replaces the configured processes (the first of two with one name is the one found by
    /// name); the counters of those that left for good are kept.
    package func set(_ list: [SupervisedProcess]) {
        let previous = processes
        processes = list
        byName = Dictionary(list.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        fold(previous)
    }

    /// A process being replaced or removed whose worker is still stopping.
    package func retire(_ process: SupervisedProcess) {
        retiring.append(process)
    }

    /// The retiring process's worker is gone.
    package func retired(_ process: SupervisedProcess) {
        retiring.removeAll { $0 === process }
        fold([process])
    }

    /// The counters of every process, those gone included.
    package var counters: Counters {
        var counters = retiredCounters
        for process in processes { counters.add(process) }
        for process in retiring { counters.add(process) }
        return counters
    }

    /// Keeps the counters of the processes that are in neither `processes` nor `retiring`.
    private func fold(_ removed: [SupervisedProcess]) {
        for process in removed where !processes.contains(where: { $0 === process }) && !retiring.contains(where: { $0 === process }) {
            retiredCounters.add(process)
        }
    }
}
