import AgentLoop
import Foundation

/// The queue: each task's runs by rank and due time, runs waiting for their not-before on one
/// loop timer, and the dispatch of what has room.
extension TaskCoordinator {
    /// Into the queue, or to wait for its not-before.
    func enqueue(_ run: TaskRun) {
        if let notBefore = run.notBefore, notBefore > Date().timeIntervalSince1970, !startsAhead(run) {
            delay(run.id, until: notBefore)
            return
        }
        insertQueued(run)
    }

    /// How far ahead of its not-before a run may be handed to a runner that holds it (a
    /// schedule decides its fires 50 ms ahead).
    nonisolated package static let aheadWindow = 0.2

    /// Whether `run`, due later, goes to its runner now and waits there for its instant: on
    /// its task's implicit module executor, within ``aheadWindow``. Then the run starts at the
    /// instant in the worker, with the loop, the queue and the pipe behind it.
    package func startsAhead(_ run: TaskRun) -> Bool {
        guard let notBefore = run.notBefore, notBefore - Date().timeIntervalSince1970 <= Self.aheadWindow, run.assignedTo == nil,
              let definition = definitions[run.task], pool.isEmpty || !pool.isTaken(run.task) else { return false }
        return runner(for: definition.type)?.startsAhead == true
    }

    /// Into its task's queue, or its executor's when assigned by hand.
    package func insertQueued(_ run: TaskRun) {
        let entry = RunQueue.Entry(id: run.id, rank: run.priority.rank, due: run.nextAttemptAt ?? run.notBefore ?? run.queuedAt,
                                   sequence: run.sequence, agingInterval: assignment.agingInterval)
        if let executor = run.assignedTo {
            pinned[executor, default: RunQueue()].insert(entry)
        } else {
            queues[run.task, default: RunQueue()].insert(entry)
        }
    }

    package func delay(_ id: String, until time: Double) {
        delayed.insert(at: time, id: id)
        armDelayTimer()
    }

    /// One loop timer, for the earliest waiting run.
    private func armDelayTimer() {
        guard !stopping, let earliest = delayed.earliest else { return }
        if let timer = delayTimer {
            if timer.at <= earliest { return }
            loop.cancel(timer.id)
        }
        let id = loop.schedule(after: earliest - Date().timeIntervalSince1970) { [weak self] in
            guard let self else { return }
            delayTimer = nil
            let due = delayed.popDue(Date().timeIntervalSince1970)
            var tasks = Set<String>()
            for id in due {
                guard let run = runs[id], active[id] == nil else { continue }
                insertQueued(run)
                tasks.insert(run.task)
            }
            for task in tasks { dispatch(task) }
            armDelayTimer()
        }
        delayTimer = (id, earliest)
    }

    /// Starts queued runs of `task` while it has room.
    /// `sendEarly`: a batch: the first run goes to its runner's worker at once (which starts
    /// on it while the rest are prepared), then every ``earlyFlush`` runs.
    package func dispatch(_ task: String, sendEarly: Bool = false) {
        if shared != nil { return claimShared() }
        guard !stopping, let definition = definitions[task] else { return }
        if !pool.isEmpty, pool.isTaken(task) { return dispatchToExecutors(task, definition) }
        var started = 0
        // Popped in place: a copy of the heap out of the dictionary would copy it whole per run.
        while runningCount[task, default: 0] < definition.maxConcurrent, queues[task]?.isEmpty == false {
            if started > 0 || !dispatchForced, startsWait(task) { break }
            guard let entry = queues[task]?.popFirst() else { break }
            if queues[task]?.isEmpty == true { queues[task] = nil }
            // Cancelled (or already started) while it waited: skip it.
            guard let run = runs[entry.id], active[entry.id] == nil, run.status == .queued || run.status == .retrying else { continue }
            start(run, definition: definition)
            if sendEarly, started % Self.earlyFlush == 0 { active[run.id]?.runner.flush() }
            started += 1
        }
    }

    /// In a batch, the runs' frames go out after the first run, then every this many.
    nonisolated package static let earlyFlush = 32

    /// How long one loop turn may spend starting runs before the rest wait for the next turn: a
    /// command's start (its cgroup, its fork) costs the loop ~0.5 ms, so 300 schedules due at
    /// one instant, or 100 runs ending together and starting the next, held the loop for 100–240
    /// ms, and `status` with it.
    nonisolated package static let startSlice = 0.004

    /// Whether `task`'s next starts wait for the next loop turn (this one has spent
    /// ``startSlice``): then it is dispatched again there, first of all, at least one run.
    func startsWait(_ task: String) -> Bool {
        guard loop.turnHasTaken(Self.startSlice) else { return false }
        if dispatchLater.isEmpty {
            loop.inbox.post { [weak self] in self?.dispatchWaiting() }
        }
        dispatchLater.insert(task)
        return true
    }

    /// The tasks whose starts waited for this turn: each starts at least one run, then as many
    /// as the turn's slice allows.
    private func dispatchWaiting() {
        let tasks = dispatchLater
        dispatchLater = []
        dispatchForced = true
        defer { dispatchForced = false }
        for task in tasks.sorted() { dispatch(task) }
    }
}
