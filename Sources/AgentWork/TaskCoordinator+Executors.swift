import AgentBase
import Foundation
import JSONSchema

/// Seconds runs waited from their due time (arrival, not-before or next attempt) to their start.
package struct WaitFigures: Equatable {
    package var count = 0
    package var sum = 0.0
    package var longest = 0.0

    package mutating func add(_ seconds: Double) {
        let wait = seconds.isFinite ? max(seconds, 0) : 0
        count += 1
        sum += wait
        longest = max(longest, wait)
    }
}

/// Declared executors (``ExecutorPool``): the strategies choose an executor with room for each
/// queued run of a task they take; tasks no executor takes keep their implicit executor.
extension TaskCoordinator {
    /// Takes the settings' executors and `"assignment"` (at start and at every reload).
    package func configureExecutors(_ executors: [ExecutorDefinition], assignment: AssignmentSettings) {
        let agingChanged = assignment.agingInterval != self.assignment.agingInterval
        self.assignment = assignment
        let drained = Set(pool.members.filter(\.draining).map(\.name)).union(restoredDrains)
        restoredDrains = []
        pool.update(executors)
        for name in drained { pool.setDraining(name, true) }
        if agingChanged { requeueAll() }
        for name in definitions.keys.sorted() { dispatch(name) }
        for name in Array(pinned.keys) { dispatchPinned(name) }
    }

    /// The queues again with the current aging interval.
    private func requeueAll() {
        let entries = queues.values.flatMap(\.entries) + pinned.values.flatMap(\.entries)
        queues = [:]
        pinned = [:]
        for entry in entries {
            guard let run = runs[entry.id], active[entry.id] == nil, run.status == .queued || run.status == .retrying else { continue }
            insertQueued(run)
        }
    }

    /// The strategy of `task`: chosen at run time, else the settings'.
    package func strategy(for task: String) -> AssignmentStrategy {
        chosenTaskStrategies[task] ?? assignment.tasks[task] ?? chosenStrategy ?? assignment.strategy
    }

    /// The labels a run's executor must carry: its task's and its own.
    package func requirement(_ run: TaskRun, _ definition: TaskDefinition) -> [String: String] {
        run.require.isEmpty ? definition.require : definition.require.merging(run.require) { _, own in own }
    }

    /// Why no executor could ever take a run of `task` requiring `require` (nil: one can).
    package func requirementProblem(task: String, _ require: [String: String]) -> String? {
        guard let definition = definitions[task] else { return nil }
        let takers = pool.takersOf(task)
        guard !takers.isEmpty else { return "task \"\(task)\" runs on its own worker: no executor takes it, so a run cannot require labels" }
        let all = definition.require.merging(require) { _, own in own }
        guard takers.contains(where: { pool.carries($0, all) }) else {
            let wanted = all.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            return "no executor taking task \"\(task)\" carries every required label (\(wanted)); `agent-control executor list` shows their labels"
        }
        return nil
    }

    /// Starts queued runs of an executor-taken task while the task has room and an executor
    /// with room is found. A run requiring labels that no executor with room carries lets the
    /// runs behind it go first (it keeps its place).
    package func dispatchToExecutors(_ task: String, _ definition: TaskDefinition) {
        if !pinned.isEmpty { for name in Array(pinned.keys) { dispatchPinned(name) } }
        let strategy = strategy(for: task)
        let now = Date().timeIntervalSince1970
        var held: [RunQueue.Entry] = []
        while runningCount[task, default: 0] < definition.maxConcurrent, let entry = queues[task]?.first {
            guard let run = runs[entry.id], active[entry.id] == nil, run.status == .queued || run.status == .retrying, run.assignedTo == nil else {
                popQueued(task)
                continue
            }
            let require = requirement(run, definition)
            let avoid = run.attempt > 0 ? run.executor.flatMap(pool.index(of:)) : nil
            guard let member = pool.choose(task: task, priority: run.priority, require: require, avoid: avoid, strategy: strategy, now: now) else {
                guard !require.isEmpty, held.count < 64 else { break }
                held.append(popQueued(task)!)
                continue
            }
            popQueued(task)
            begin(run, definition: definition, member: member, strategy: strategy.rawValue)
        }
        for entry in held { queues[task, default: RunQueue()].insert(entry) }
    }

    @discardableResult
    private func popQueued(_ task: String) -> RunQueue.Entry? {
        let entry = queues[task]?.popFirst()
        if queues[task]?.isEmpty == true { queues[task] = nil }
        return entry
    }

    /// Starts the runs assigned by hand to `name` while it has room.
    package func dispatchPinned(_ name: String) {
        guard !stopping else { return }
        let now = Date().timeIntervalSince1970
        while let entry = pinned[name]?.first {
            guard let run = runs[entry.id], active[entry.id] == nil, run.status == .queued || run.status == .retrying,
                  run.assignedTo == name, let definition = definitions[run.task] else {
                _ = pinned[name]?.popFirst()
                continue
            }
            guard runningCount[run.task, default: 0] < definition.maxConcurrent, let member = pool.index(of: name),
                  pool.canTake(member, task: run.task, now: now) else { break }
            _ = pinned[name]?.popFirst()
            begin(run, definition: definition, member: member, strategy: "manual")
        }
        if pinned[name]?.isEmpty == true { pinned[name] = nil }
    }

    /// Counts the run on `member` and starts it there: `task.reassigned` when a retry moves to
    /// another executor, then `task.assigned`.
    /// Starts a run claimed from the fleet's queue on the executor the task's strategy chooses
    /// among those with room and the run's labels; false when none can take it now (the claim
    /// counted their room and labels, but an executor may have filled or gone offline since).
    package func adoptOnExecutor(_ run: TaskRun, definition: TaskDefinition) -> Bool {
        let strategy = strategy(for: run.task)
        let avoid = run.attempt > 1 ? run.executor.flatMap(pool.index(of:)) : nil
        guard let member = pool.choose(task: run.task, priority: run.priority, require: requirement(run, definition), avoid: avoid,
                                       strategy: strategy, now: Date().timeIntervalSince1970) else { return false }
        begin(run, definition: definition, member: member, strategy: strategy.rawValue)
        return true
    }

    private func begin(_ run: TaskRun, definition: TaskDefinition, member: Int, strategy: String) {
        let executor = pool.members[member]
        pool.begin(member, task: definition.name)
        var payload: JSONObject = ["run_id": .string(run.id), "task": .string(run.task), "executor": .string(executor.name),
                                   "strategy": .string(strategy), "priority": .string(run.priority.rawValue),
                                   "attempt": .number(JSONNumber(run.claim == nil ? run.attempt + 1 : run.attempt))]
        // A claimed run's attempt is counted already (by its claim).
        if let previous = run.executor, previous != executor.name, run.attempt > (run.claim == nil ? 0 : 1) {
            payload["from"] = .string(previous)
            publish(.taskReassigned, payload, run.cascade)
            payload["from"] = nil
        }
        if let user = executor.definition.user { payload["user"] = .string(user) }
        if let role = executor.definition.role { payload["role"] = .string(role) }
        publish(.taskAssigned, payload, run.cascade)
        start(run, definition: definition, executor: executor.name, person: executor.definition.isPerson)
    }

    /// An attempt on a declared executor ended: counted off it. A worker that died during the
    /// run takes the executor offline for its backoff, and the attempt counts as interrupted:
    /// the run is retried (at least once), on another executor when one can take it.
    package func executorEnded(_ executor: String, task: String, outcome: TaskRunOutcome) -> TaskRunOutcome {
        guard let member = pool.index(of: executor) else { return outcome }
        pool.end(member, task: task, lost: outcome.executorLost, now: Date().timeIntervalSince1970)
        guard outcome.executorLost else { return outcome }
        logger.warning("executor \(executor) lost a run of \(task): \(outcome.error ?? "its worker died"); it is offline for a while and the run is retried")
        // Back online, it takes what waits: with every executor offline, nothing else would
        // look at the queue again until another request came.
        if let until = pool.members[member].offlineUntil {
            loop.schedule(after: max(until - Date().timeIntervalSince1970, 0) + 0.001) { [weak self] in
                self?.executorFreed(executor, task: task)
            }
        }
        var interrupted = outcome
        interrupted.status = .interrupted
        interrupted.error = "executor \(executor): \(outcome.error ?? "its worker died during the run"); retried on another executor"
        return interrupted
    }

    /// An executor has room again: its runs assigned by hand first, then the tasks it takes,
    /// the one with the best queued run first.
    package func executorFreed(_ executor: String, task: String) {
        dispatchPinned(executor)
        guard let member = pool.index(of: executor) else { return dispatch(task) }
        let taken = pool.members[member].slotTasks
        if taken.count == 1 {
            dispatch(taken[0])
        } else {
            let heads = taken.compactMap { name in queues[name]?.first.map { (name, $0) } }.sorted { $0.1.precedes($1.1) }
            for (name, _) in heads { dispatch(name) }
        }
        if !taken.contains(task) { dispatch(task) }
    }

    // MARK: Commands

    /// `task assign RUN --to EXECUTOR`: a queued (or retrying) run waits for that executor's
    /// room, whatever the strategy.
    package func assign(_ id: String, to name: String) -> Result<TaskRunAnswer, CommandError> {
        guard var run = runs[id] else { return .failure(.notFound("no unfinished run with id \"\(id)\"; `agent-control task runs --status queued` lists the queued ones")) }
        guard active[id] == nil, run.status == .queued || run.status == .retrying else {
            return .failure(.conflict("run \(id) is \(run.status.rawValue)\(run.executor.map { " on \($0)" } ?? ""); only a queued or retrying run can be assigned (cancel it and run it again)"))
        }
        guard let member = pool.index(of: name) else {
            let names = pool.members.map(\.name)
            return .failure(.notFound("no executor named \"\(name)\"\(Suggestions.hint(for: name, in: names)); executors: \(names.isEmpty ? "none (declare a process of type \"executor\")" : names.joined(separator: ", "))"))
        }
        guard pool.members[member].slotOf[run.task] != nil else {
            return .failure(.invalid("executor \(name) does not take task \"\(run.task)\"; it takes: \(pool.members[member].slotTasks.joined(separator: ", "))", pointer: "/to"))
        }
        if let definition = definitions[run.task], !pool.carries(member, requirement(run, definition)) {
            let wanted = requirement(run, definition).sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
            return .failure(.invalid("executor \(name) does not carry every label run \(id) requires (\(wanted))", pointer: "/to"))
        }
        let previous = run.assignedTo
        run.assignedTo = name
        runs[id] = run
        if previous != name {
            var payload: JSONObject = ["run_id": .string(id), "task": .string(run.task), "executor": .string(name), "strategy": "manual"]
            if let previous { payload["from"] = .string(previous) }
            if previous != nil { publish(.taskReassigned, payload, run.cascade) }
            record(run, event: .taskQueued)
        }
        if previous != name, run.status == .queued, !notYetDue(run) { insertQueued(run) }
        dispatchPinned(name)
        return .success(TaskRunAnswer(runs[id] ?? recent[id] ?? run))
    }

    /// `task unassign RUN`: the run goes back to the strategy.
    package func unassign(_ id: String) -> Result<TaskRunAnswer, CommandError> {
        guard var run = runs[id] else { return .failure(.notFound("no unfinished run with id \"\(id)\"")) }
        guard run.assignedTo != nil else { return .failure(.conflict("run \(id) is not assigned by hand; nothing to undo")) }
        guard active[id] == nil else { return .failure(.conflict("run \(id) is already running on \(run.executor ?? "its executor")")) }
        run.assignedTo = nil
        runs[id] = run
        record(run, event: .taskQueued)
        if run.status == .queued, !notYetDue(run), !(queues[run.task]?.entries.contains { $0.id == id } ?? false) { insertQueued(run) }
        dispatch(run.task)
        return .success(TaskRunAnswer(runs[id] ?? recent[id] ?? run))
    }

    /// A run waiting for its not-before time (it is queued when it comes).
    private func notYetDue(_ run: TaskRun) -> Bool {
        (run.notBefore ?? 0) > Date().timeIntervalSince1970
    }

    /// `executor drain NAME` / `executor resume NAME`.
    package func setDraining(_ name: String, _ draining: Bool) -> Result<ExecutorAnswer, CommandError> {
        guard pool.setDraining(name, draining) else {
            let names = pool.members.map(\.name)
            return .failure(.notFound("no executor named \"\(name)\"\(Suggestions.hint(for: name, in: names)); executors: \(names.isEmpty ? "none" : names.joined(separator: ", "))"))
        }
        assignmentStore?.save(key: "drain:" + name, value: draining ? "true" : nil)
        publish(draining ? .executorDraining : .executorResumed, ["executor": .string(name)], 0)
        if !draining, let member = pool.index(of: name) {
            dispatchPinned(name)
            for task in pool.members[member].slotTasks { dispatch(task) }
        }
        return .success(ExecutorAnswer(executor: describe(pool.index(of: name)!)))
    }

    /// `task set-strategy [--task T] STRATEGY` (kept in the store).
    package func setStrategy(_ strategy: AssignmentStrategy, task: String?) -> Result<JSONValue, CommandError> {
        if let task {
            guard definitions[task] != nil else {
                let names = definitions.keys.sorted()
                return .failure(CommandError(.notFound, "no task named \"\(task)\"\(Suggestions.hint(for: task, in: names)); tasks: \(names.joined(separator: ", "))", pointer: "/task"))
            }
            chosenTaskStrategies[task] = strategy
        } else {
            chosenStrategy = strategy
        }
        assignmentStore?.save(key: task.map { "strategy:" + $0 } ?? "strategy", value: strategy.rawValue)
        var payload: JSONObject = ["strategy": .string(strategy.rawValue)]
        if let task { payload["task"] = .string(task) }
        publish(.assignmentStrategy, payload, 0)
        return .success(strategies)
    }

    /// Takes what the store kept: strategies chosen at run time, drained executors.
    package func restoreAssignment(_ values: [String: String]) {
        for (key, value) in values {
            if key == "strategy" { chosenStrategy = AssignmentStrategy(rawValue: value) }
            else if key.hasPrefix("strategy:"), let strategy = AssignmentStrategy(rawValue: value) {
                chosenTaskStrategies[String(key.dropFirst("strategy:".count))] = strategy
            } else if key.hasPrefix("drain:") {
                restoredDrains.insert(String(key.dropFirst("drain:".count)))
            }
        }
    }

    /// The agent's strategy and each task's.
    package var strategies: JSONValue {
        var tasks: JSONObject = [:]
        for name in definitions.keys where pool.isTaken(name) { tasks[name] = .string(strategy(for: name).rawValue) }
        return ["agent": .string((chosenStrategy ?? assignment.strategy).rawValue), "tasks": .object(tasks),
                "aging_interval": .number(JSONNumber(assignment.agingInterval))]
    }

    /// One executor as `executor list` shows it.
    package func describe(_ member: Int) -> JSONValue {
        let m = pool.members[member]
        var tasks: JSONObject = [:]
        for (slot, task) in m.slotTasks.enumerated() {
            var entry: JSONObject = ["priority_boost": .number(JSONNumber(m.slotBoost[slot])), "running": .number(JSONNumber(m.slotRunning[slot]))]
            if m.slotLimit[slot] != Int.max { entry["max_concurrent"] = .number(JSONNumber(m.slotLimit[slot])) }
            tasks[task] = .object(entry)
        }
        var object: JSONObject = [
            "name": .string(m.name), "process": .string(m.definition.process),
            "state": .string(pool.state(of: member, now: Date().timeIntervalSince1970).rawValue),
            "running": .number(JSONNumber(m.running)), "max_concurrent": .number(JSONNumber(m.maxConcurrent)),
            "assigned": .number(JSONNumber(m.assigned)), "tasks": .object(tasks),
            "labels": ExecutorSettings.json(m.definition.labels),
            "waiting": .number(JSONNumber(pinned[m.name]?.count ?? 0)),
        ]
        if let preference = m.definition.priorityPreference { object["priority_preference"] = .string(preference.rawValue) }
        if let user = m.definition.user { object["user"] = .string(user) }
        if let role = m.definition.role {
            object["role"] = .string(role)
            object["people"] = .array(m.definition.people.map(JSONValue.string))
        }
        object["runs"] = .array(active.filter { $0.value.executor == m.name }.keys.sorted().map(JSONValue.string))
        return .object(object)
    }

    /// `executor list`.
    package func listExecutors() -> ExecutorListCommand.Answer {
        ExecutorListCommand.Answer(executors: pool.members.indices.map(describe), strategies: strategies, statistics: assignmentStatistics)
    }

    /// The snapshot's figures (nil: no executor is declared).
    package var assignmentFigures: AssignmentFigures? {
        guard !pool.isEmpty else { return nil }
        let now = Date().timeIntervalSince1970
        let executors = pool.members.indices.map { index in
            let m = pool.members[index]
            return AssignmentFigures.Executor(name: m.name, state: pool.state(of: index, now: now).rawValue, running: m.running,
                                                            maxConcurrent: m.maxConcurrent, assigned: m.assigned)
        }
        var queued: [String: Int] = [:]
        for priority in TaskRun.Priority.allCases { queued[priority.rawValue] = max(unfinishedByRank[priority.rank] - runningByRank[priority.rank], 0) }
        return AssignmentFigures(executors: executors, queuedByPriority: queued, started: waits.count, waitSum: waits.sum,
                                               waitLongest: waits.longest, json: assignmentStatistics)
    }

    /// Executors by state, the queue by priority, waits: for status, diagnostics and metrics.
    package var assignmentStatistics: JSONValue {
        let now = Date().timeIntervalSince1970
        var states: JSONObject = [:]
        for state in ExecutorPool.State.allCases { states[state.rawValue] = 0 }
        for member in pool.members.indices {
            let state = pool.state(of: member, now: now).rawValue
            states[state] = .number(JSONNumber((states[state]?.numberValue?.intValue ?? 0) + 1))
        }
        var queued: JSONObject = [:]
        for priority in TaskRun.Priority.allCases {
            queued[priority.rawValue] = .number(JSONNumber(max(unfinishedByRank[priority.rank] - runningByRank[priority.rank], 0)))
        }
        return ["executors": .number(JSONNumber(pool.members.count)), "executors_by_state": .object(states), "queued_by_priority": .object(queued),
                "started": .number(JSONNumber(waits.count)), "wait_seconds_total": .number(JSONNumber(waits.sum)),
                "wait_seconds_max": .number(JSONNumber(waits.longest)),
                "wait_seconds_mean": .number(JSONNumber(waits.count == 0 ? 0 : waits.sum / Double(waits.count)))]
    }
}
