import AgentBase
import AgentCommands
import AgentCore
import AgentLoop
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// Wiring of the work layer: the ``TaskCoordinator`` does the work; the supervisor creates it,
/// forwards commands, reloads and the stop, publishes its events and fires its triggers.
extension Supervisor {
    /// Creates the coordinator with the settings' tasks and the runs a previous life of the
    /// agent left unfinished (read from the store now, before the loop runs). Call once, after
    /// ``store`` is set.
    /// `notifications`: the settings' agent-wide `"notifications"` (each task's `"notify"` is
    /// merged over it).
    /// `executors`, `assignment`: the declared executors and the strategies (none: every task
    /// runs on its implicit executor).
    public func setUpTasks(_ definitions: [TaskDefinition], executors: [ExecutorDefinition] = [], assignment: AssignmentSettings = AssignmentSettings(),
                           agentDirectory: String, notifications: JSONValue? = nil) {
        var runStore: (any RunStore)?
        if let fleet {
            runStore = fleet.runStore
        } else if let store {
            do {
                runStore = try SQLiteRunStore(store: store)
            } catch {
                logger.error("tasks: cannot read runs from the store (\(error)); runs are kept in memory only")
            }
        }
        let coordinator = TaskCoordinator(loop: loop, store: runStore, logger: logger)
        // The built-in `command` type: programs spawned from this (the loop's) thread, inside
        // the workers' containment.
        coordinator.register(CommandTaskRunner(loop: loop, agentDirectory: agentDirectory, environment: configuration.environment,
                                               containment: containment, logger: logger), for: "command")
        coordinator.publish = { [unowned self] type, payload, cascade in publishTaskEvent(type, payload, cascade: cascade) }
        let notifier = TaskNotifier(defaults: notifications, outputs: outputs, agentName: URL(fileURLWithPath: agentDirectory).lastPathComponent,
                                    agentDirectory: agentDirectory, logger: logger)
        coordinator.attemptEnded = { end in
            notifier.runEnded(task: end.task, runID: end.run.id, attempt: end.run.attempt, interruptions: end.run.interruptions, outcome: end.outcome,
                              willRetry: end.retryFollows, time: Date())
        }
        taskNotifier = notifier
        coordinator.moduleRunner = ModuleTaskRunner(host: self) { [unowned self] type in moduleTaskTypes[type] }
        coordinator.personRunner = PersonTaskRunner()
        tasks = coordinator
        if let store {
            let assignmentStore = SQLiteAssignmentStore(store: store, logger: logger)
            coordinator.assignmentStore = assignmentStore
            do {
                coordinator.restoreAssignment(try assignmentStore.load())
            } catch {
                logger.error("assignment: cannot read the strategies and drains kept in the store (\(error)); the settings' apply")
            }
        }
        applyTasks(definitions, executors: executors, assignment: assignment)
        if let fleet {
            // The queue is the fleet's: claimed, not recovered (a run this agent held when it
            // died is rescued by whichever agent claims it after its lease lapses).
            coordinator.joinFleet(holder: fleet.settings.agentID, lease: fleet.settings.lease, poll: fleet.settings.poll,
                                  hold: fleet.settings.assignmentHold)
            let inbox = loop.inbox
            let wake = LoopBound(value: coordinator)
            fleet.listen { inbox.post { wake.value.fleetWakeup() } }
        } else if let runStore {
            do {
                let previous = try StoreWait.result { try await runStore.loadUnfinished() }
                if !previous.isEmpty { logger.info("tasks: \(previous.count) unfinished run(s) from the agent's previous run") }
                coordinator.recover(previous)
            } catch {
                logger.error("tasks: cannot read the unfinished runs from the store: \(error)")
            }
        }
    }

    /// Whether `pid` (a child of the supervisor) belongs to a running `command` task: the
    /// program itself or what of its process group or cgroup was left to the supervisor (a subreaper).
    /// The orphan sweep leaves those to the command runner.
    func isTaskCommandProcess(_ pid: pid_t) -> Bool {
        guard let runner = tasks?.runner(for: "command") as? CommandTaskRunner else { return false }
        return runner.owns(pid)
    }

    /// Takes the settings' tasks (at start and at a reload) and their triggers.
    func applyTasks(_ definitions: [TaskDefinition], executors: [ExecutorDefinition], assignment: AssignmentSettings) {
        guard let tasks else { return }
        // Executors first: the runs the definitions start go to them.
        tasks.configureExecutors(executors, assignment: assignment)
        tasks.apply(definitions)
        var triggers: [String: [TaskTrigger]] = [:]
        for task in definitions {
            guard let trigger = task.onEvent else { continue }
            let condition = trigger.condition.flatMap { try? JSONSchemaValidator(schema: $0) }
            triggers[trigger.type, default: []].append(TaskTrigger(task: task.name, condition: condition))
        }
        ownTaskTriggers = triggers
        refreshTriggers()
    }

    /// The triggers routing looks up: the tasks' and, for each event type the workflow engine
    /// wants, one entry for it (none when no workflow waits: routing is unchanged then).
    func refreshTriggers() {
        var triggers = ownTaskTriggers
        for type in workflows?.wantedTypes ?? [] { triggers[type, default: []].append(TaskTrigger(task: "", condition: nil, workflows: true)) }
        if triggers.isEmpty != taskTriggers.isEmpty || !triggers.isEmpty {
            taskTriggers = triggers
            // Sources look their triggers up again with their targets.
            routingGeneration += 1
        }
    }

    /// The task commands, on the loop.
    func taskCommand(_ request: JSONValue, caller: CommandCenter.Caller, respond: @escaping (JSONValue) -> Void) {
        guard let tasks else {
            return respond(["ok": false, "code": "unavailable", "error": "this agent runs no tasks"])
        }
        let reads: Set<String> = ["task_list", "task_show", "task_runs", "executor_list", "task_assignments"]
        guard !stopping || reads.contains(request["command"]?.stringValue ?? "") else {
            return respond(CommandCenter.stoppingAnswer)
        }
        tasks.answer(request, origin: caller.front == "control" ? .cli : .http, inbox: loop.inbox, caller: caller, respond: respond)
    }

    /// Runs the tasks triggered by an event whose payload passes their condition, with the
    /// event as input. `cascade`: the depth of a run's event in its chain of triggers (see
    /// ``WorkflowEngine/deepestCascade``; 0 for any other event).
    func fire(_ triggers: [TaskTrigger], type: String, source: String, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer, cascade: Int = 0) {
        guard let tasks, !stopping else { return }
        let value = (try? JSONValue.parse(payload)) ?? .string(String(decoding: payload, as: UTF8.self))
        for trigger in triggers {
            if trigger.workflows {
                workflows?.eventArrived(type: type, source: source, time: Double(timeNanoseconds) / 1e9, payload: value, cascade: cascade)
                continue
            }
            // A task's own events do not trigger it again (no endless chain).
            if source == "tasks", value["task"]?.stringValue == trigger.task { continue }
            if let condition = trigger.condition {
                switch ConditionOutcome(condition, on: value) {
                case .passes: break
                case .fails: continue
                case .undecided(let error):
                    tasks.undecidedConditions.report("the \"where\" of task \(trigger.task)'s on_event", eventType: type, source: source, error)
                    continue
                }
            }
            let input: JSONValue = ["type": .string(type), "source": .string(source),
                                    "time": .string(TaskRun.iso(Double(timeNanoseconds) / 1e9)), "payload": value]
            if let problem = tasks.inputProblems(input, task: trigger.task).first {
                logger.warning("tasks: event \(type) from \(source) is no valid input of task \(trigger.task) (\(problem.pointer): \(problem.message)); no run")
                continue
            }
            guard cascade < WorkflowEngine.deepestCascade else {
                stopCascade(type: type, source: source, task: trigger.task, cascade: cascade)
                continue
            }
            tasks.submit(tasks.prepare(task: trigger.task, input: input, priority: .normal, requestedBy: .event, cascade: cascade + 1))
        }
    }

    /// A task event (`task.queued`, `task.started`, `task.succeeded`…) from source `tasks`:
    /// shown, stored and published like any event, delivered to its subscribers, and able to
    /// trigger other tasks.
    func publishTaskEvent(_ type: String, _ payload: JSONValue, cascade: Int = 0) {
        publishWorkEvent(type, payload, source: "tasks", cascade: cascade)
    }

    /// A chain of triggers at ``WorkflowEngine/deepestCascade``: the event starts no run of
    /// `task`; said once, in the log and as a `task.cascade_stopped` event of the same depth.
    private func stopCascade(type: String, source: String, task: String, cascade: Int) {
        logger.error("tasks: trigger cascade stopped: the event \(type) from \(source) comes \(cascade) runs deep (each started by an event of the one before, at most \(WorkflowEngine.deepestCascade)); task \(task) is not run. A trigger cycle goes on without end: make its \"where\" end it, or break it")
        publishTaskEvent("task.cascade_stopped", ["task": .string(task), "event_type": .string(type), "source": .string(source),
                                                  "depth": .number(JSONNumber(cascade)), "limit": .number(JSONNumber(WorkflowEngine.deepestCascade))],
                         cascade: cascade)
    }

    /// An event of the work layer from `source` (`tasks`, `schedules`): shown, stored,
    /// published, delivered to its subscribers and able to trigger tasks.
    func publishWorkEvent(_ type: String, _ payload: JSONValue, source: String, cascade: Int = 0) {
        let body = Array(payload.serialized().utf8)
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        let now = Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
        let typeBytes = Array(type.utf8)
        typeBytes.withUnsafeBytes { t in
            body.withUnsafeBytes { p in console.event(source: source, type: t, timeNanoseconds: now, payload: p) }
        }
        store?.append(type: type, source: source, time: Double(now) / 1e9, payload: body)
        if let outputs, outputs.wants(.event) {
            outputs.publish(.event(source: source, type: type, payload: body, time: now))
        }
        for process in (subscribers[type] ?? []) + wildcardSubscribers where process.acceptsDeliveries {
            deliver(type: type, source: source, payload: payload, to: process)
        }
        for group in (groupSubscribers[type] ?? []) + wildcardGroups {
            if let process = group.pick(bytes: body.count) { deliver(type: type, source: source, payload: payload, to: process) }
        }
        if let triggers = taskTriggers[type] {
            body.withUnsafeBytes { fire(triggers, type: type, source: source, timeNanoseconds: now, payload: $0, cascade: cascade) }
        }
        if fleetPublished.contains(type) {
            body.withUnsafeBytes { publishToFleet(type: type, source: source, timeNanoseconds: now, payload: $0) }
        }
    }
}
