import AgentBase
import AgentLoop
import AgentOutputs
import AgentSupervision
import Foundation
import JSONSchema
import Logging

/// The work layer as the supervisor owns it: the ``TaskCoordinator``, the ``Scheduler``, the
/// ``WorkflowEngine`` and the ``TaskNotifier``, made from the settings at start
/// (``setUp(_:agentDirectory:notifications:containment:)``) and changed by each reload
/// (``apply(_:)``). It publishes their events, fires the tasks' `on_event` triggers (see
/// `WorkHost+Triggers`) and stops the work when the agent stops.
///
/// It reaches supervision only through ``ExecutorHost`` (executor workers, the loop, whether
/// the agent stops) and ``EventPublisher`` (routing), and its records through ``WorkStorage``
/// or the fleet's ``FleetBackend``: never the supervisor itself.
@LoopActor
package final class WorkHost {
    /// What the settings give the work layer, at start and at each reload.
    package struct Definitions {
        package var tasks: [TaskDefinition] = []
        /// The declared executors (none: every task runs on its implicit executor).
        package var executors: [ExecutorDefinition] = []
        package var assignment = AssignmentSettings()
        package var schedules: [ScheduleDefinition] = []
        package var workflows: [WorkflowDefinition] = []
        /// The HTTP users and tokens with their role, who may answer approvals.
        package var roles: [String: String] = [:]
        /// The module task types of the tasks: where the module runner finds their libraries.
        package var moduleTasks: [String: ModuleTaskType] = [:]
        /// `"events"`: what events published from outside may be.
        package var events = EventSettings()

        package init(tasks: [TaskDefinition] = [], executors: [ExecutorDefinition] = [], assignment: AssignmentSettings = AssignmentSettings(),
                     schedules: [ScheduleDefinition] = [], workflows: [WorkflowDefinition] = [], roles: [String: String] = [:],
                     moduleTasks: [String: ModuleTaskType] = [:], events: EventSettings = EventSettings()) {
            self.tasks = tasks
            self.executors = executors
            self.assignment = assignment
            self.schedules = schedules
            self.workflows = workflows
            self.roles = roles
            self.moduleTasks = moduleTasks
            self.events = events
        }
    }

    /// The task runs (nil until set up: an agent embedded without work has none).
    package private(set) var tasks: TaskCoordinator?
    package private(set) var scheduler: Scheduler?
    package private(set) var workflows: WorkflowEngine?
    /// Notifications about task runs (made with the tasks).
    package private(set) var notifier: TaskNotifier?
    /// The module task types of the settings' tasks (see ``Definitions/moduleTasks``).
    package private(set) var moduleTaskTypes: [String: ModuleTaskType] = [:]
    /// `"events"` of the settings, and the compiled schemas of its declared types (see `WorkHost+Intake`).
    var eventSettings = EventSettings()
    var payloadValidators: [String: JSONSchemaValidator] = [:]
    /// Published events handed to the store and not answered yet (see ``mostPublishesWaiting``).
    var publishesWaiting = 0
    /// Event type → what an event of the type triggers (routing caches each source's entry).
    package internal(set) var triggers: [String: [TaskTrigger]] = [:]
    /// The tasks' own triggers (``triggers`` adds the workflows' wanted types).
    var ownTriggers: [String: [TaskTrigger]] = [:]

    unowned let host: any ExecutorHost
    unowned let events: any EventPublisher
    /// The environment command tasks' programs start from (the agent's).
    private let environment: [String: String]
    private(set) var storage: (any WorkStorage)?
    private var fleet: (any FleetBackend)?
    private var outputs: OutputHub?
    private var memory: (any MemoryStore)?
    /// Hands events of the types the fleet publishes to the fleet (nil: not in a fleet).
    package weak var fleetBridge: FleetBridge?
    /// Asks the chatbot for a workflow's `ask` step: the text, the adapter (nil: any), the
    /// conversation; `answer` is called once, on the loop.
    package var askChatbot: (String, String?, String, @escaping (Result<String, WorkflowError>) -> Void) -> Void = { _, _, _, answer in
        answer(.failure(WorkflowError(code: "chat", message: "no chatbot in this agent")))
    }

    /// Whether a name is one of the agent's processes: an event published from outside may not
    /// pass for one (its subscribers and the event log would take it for the process's own).
    package var isProcessName: (String) -> Bool = { _ in false }
    /// Trigger cascades stopped, by task: logged the 1st, 10th, 100th… time.
    var cascadeStops = LogCounts()
    /// Runs of events left out for their size or for the input the unfinished runs hold, by
    /// task: logged the 1st, 10th, 100th… time.
    var inputRefusals = LogCounts()

    var loop: EventLoop { host.loop }
    var logger: Logger { host.logger }

    package init(host: any ExecutorHost, events: any EventPublisher, environment: [String: String]) {
        self.host = host
        self.events = events
        self.environment = environment
    }

    /// Where the work keeps its records and sends its notifications; call before
    /// ``setUp(_:agentDirectory:notifications:containment:)``. `fleet`: runs, schedules and
    /// workflows are the fleet's; `storage`: the agent's own store (nil with neither: in memory).
    package func attach(storage: (any WorkStorage)?, fleet: (any FleetBackend)?, outputs: OutputHub?, memory: (any MemoryStore)?) {
        self.storage = storage
        self.fleet = fleet
        self.outputs = outputs
        self.memory = memory
        notifier?.outputs = outputs
    }

    /// Creates the coordinator, the workflow engine and the scheduler with the settings'
    /// definitions and what a previous life of the agent left unfinished (read from the store
    /// now, before the loop runs). Call once, after ``attach(storage:fleet:outputs:memory:)``.
    /// `notifications`: the settings' agent-wide `"notifications"` (each task's `"notify"` is
    /// merged over it). `containment`: where command tasks' programs go, as the workers do.
    package func setUp(_ definitions: Definitions, agentDirectory: String, notifications: JSONValue?, containment: WorkerContainment?) {
        moduleTaskTypes = definitions.moduleTasks
        setUpTasks(definitions, agentDirectory: agentDirectory, notifications: notifications, containment: containment)
        // Before the scheduler: a schedule may start workflows.
        setUpWorkflows(definitions.workflows, roles: definitions.roles)
        setUpSchedules(definitions.schedules)
        applyEvents(definitions.events)
    }

    /// A reload's definitions: the tasks (executors first), schedules, workflows and who may
    /// answer approvals (the HTTP server keeps its logins) follow at once.
    package func apply(_ definitions: Definitions) {
        moduleTaskTypes = definitions.moduleTasks
        applyEvents(definitions.events)
        applyTasks(definitions.tasks, executors: definitions.executors, assignment: definitions.assignment)
        scheduler?.apply(definitions.schedules)
        workflows?.apply(definitions.workflows)
        workflows?.roles = definitions.roles
    }

    // MARK: Tasks

    private func setUpTasks(_ definitions: Definitions, agentDirectory: String, notifications: JSONValue?, containment: WorkerContainment?) {
        let runStore = openRunStore()
        let coordinator = TaskCoordinator(loop: loop, store: runStore, logger: logger)
        // Each attempt records the agent that ran it (outside a fleet: this one, by its folder's name).
        coordinator.agentName = URL(fileURLWithPath: agentDirectory).lastPathComponent
        // The built-in `command` type: programs spawned from this (the loop's) thread, inside
        // the workers' containment.
        coordinator.register(CommandTaskRunner(loop: loop, agentDirectory: agentDirectory, environment: environment,
                                               containment: containment, logger: logger), for: "command")
        coordinator.publish = { [unowned self] type, payload, cascade in publish(type, payload, source: "tasks", cascade: cascade) }
        let notifier = TaskNotifier(defaults: notifications, outputs: outputs, agentName: URL(fileURLWithPath: agentDirectory).lastPathComponent,
                                    agentDirectory: agentDirectory, logger: logger)
        coordinator.attemptEnded = { end in
            notifier.runEnded(task: end.task, runID: end.run.id, attempt: end.run.attempt, interruptions: end.run.interruptions, outcome: end.outcome,
                              willRetry: end.retryFollows, time: Date())
        }
        self.notifier = notifier
        coordinator.moduleRunner = ModuleTaskRunner(host: host) { [unowned self] type in moduleTaskTypes[type] }
        coordinator.personRunner = PersonTaskRunner()
        tasks = coordinator
        restoreAssignment(of: coordinator)
        applyTasks(definitions.tasks, executors: definitions.executors, assignment: definitions.assignment)
        recoverRuns(of: coordinator, from: runStore)
    }

    /// The fleet's runs, else the store's (nil: runs are kept in memory only).
    private func openRunStore() -> (any RunStore)? {
        if let fleet { return fleet.runStore }
        guard let storage else { return nil }
        do {
            return try storage.openRunStore()
        } catch {
            logger.error("tasks: cannot read runs from the store (\(error)); runs are kept in memory only")
            return nil
        }
    }

    private func restoreAssignment(of coordinator: TaskCoordinator) {
        guard let storage else { return }
        let assignmentStore = storage.openAssignmentStore(logger: logger)
        coordinator.assignmentStore = assignmentStore
        do {
            coordinator.restoreAssignment(try assignmentStore.load())
        } catch {
            logger.error("assignment: cannot read the strategies and drains kept in the store (\(error)); the settings' apply")
        }
    }

    private func recoverRuns(of coordinator: TaskCoordinator, from runStore: (any RunStore)?) {
        if let fleet {
            // The queue is the fleet's: claimed, not recovered (a run this agent held when it
            // died is rescued by whichever agent claims it after its lease lapses). Claims
            // begin when the fleet is joined (``fleetJoined(ready:)``).
            coordinator.joinFleet(holder: fleet.settings.agentID, lease: fleet.settings.lease, poll: fleet.settings.poll,
                                  hold: fleet.settings.assignmentHold)
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

    /// Takes the settings' tasks (at start and at a reload) and their triggers.
    private func applyTasks(_ definitions: [TaskDefinition], executors: [ExecutorDefinition], assignment: AssignmentSettings) {
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
        ownTriggers = triggers
        refreshTriggers()
    }

    /// Whether `pid` (a child of the supervisor) belongs to a running `command` task: the
    /// program itself or what of its process group or cgroup was left to the supervisor (a
    /// subreaper). The orphan sweep leaves those to the command runner.
    package func isTaskCommandProcess(_ pid: pid_t) -> Bool {
        guard let runner = tasks?.runner(for: "command") as? CommandTaskRunner else { return false }
        return runner.owns(pid)
    }

    /// The agent got SIGCHLD: the `command` runs' daemons that died are reaped.
    package func childrenChanged() {
        (tasks?.runner(for: "command") as? CommandTaskRunner)?.childrenChanged()
    }

    /// The workflow run whose memory scope a task handler's run has (see
    /// ``TaskRun/workflowRunID``): nil for a process, or a run that is no workflow step.
    package func workflowRunScope(token: UInt64, process: SupervisedProcess) -> String? {
        guard token != 0, let runner = tasks?.moduleRunner as? ModuleTaskRunner, let runID = runner.runID(token: token, process: process) else { return nil }
        return tasks?.runs[runID]?.workflowRunID
    }

    // MARK: Schedules

    /// Creates the scheduler with the settings' schedules and their saved states (read from the
    /// store now, before the loop runs). In a fleet, fires wait for the leadership (see
    /// ``FleetBridge``).
    private func setUpSchedules(_ definitions: [ScheduleDefinition]) {
        guard let tasks else { return }
        if let fleet {
            let scheduler = Scheduler(loop: loop, store: fleet.scheduleStore, tasks: tasks, logger: logger)
            scheduler.publish = { [unowned self] type, payload in publish(type, payload, source: "schedules") }
            scheduler.inFleet = true
            scheduler.fleetDefinitions = definitions
            self.scheduler = scheduler
            return
        }
        var scheduleStore: (any ScheduleStore)?
        var saved: [String: ScheduleState] = [:]
        if let storage {
            do {
                let store = try storage.openScheduleStore()
                saved = try StoreWait.result { try await store.loadStates() }
                scheduleStore = store
            } catch {
                logger.error("schedules: cannot read their state from the store (\(error)); schedules are kept in memory only")
            }
        }
        let scheduler = Scheduler(loop: loop, store: scheduleStore, tasks: tasks, logger: logger)
        scheduler.workflows = workflows
        scheduler.publish = { [unowned self] type, payload in publish(type, payload, source: "schedules") }
        self.scheduler = scheduler
        scheduler.start(definitions, saved: saved)
    }

    // MARK: Workflows

    /// Creates the engine with the settings' workflows and resumes the runs a previous life of
    /// the agent left unfinished (read from the store now; resumed once the loop runs).
    /// `roles`: who may answer approvals.
    private func setUpWorkflows(_ definitions: [WorkflowDefinition], roles: [String: String]) {
        guard let tasks else { return }
        let opened = openWorkflowStore()
        let previous = opened?.unfinished ?? []
        let engine = WorkflowEngine(loop: loop, store: opened?.store, tasks: tasks, logger: logger)
        engine.publish = { [unowned self] type, payload, cascade in publish(type, payload, source: "workflows", cascade: cascade) }
        engine.emit = { [unowned self] type, payload, workflow, cascade in
            publish(type, payload, source: "workflow:" + workflow, cascade: cascade)
        }
        engine.ask = { [unowned self] text, adapter, conversation, answer in askChatbot(text, adapter, conversation, answer) }
        engine.roles = roles
        engine.wantedTypesChanged = { [unowned self] in refreshTriggers() }
        if let memory {
            // `set` steps' memory and `${memory:…}` references: the agent's scope, or the run's.
            engine.memoryRead = { key, run in try? memory.get(key, scope: run.map { .workflowRun($0) } ?? .agent)?.value }
            engine.memoryWrite = { [logger] key, value, run in
                memory.commit(MemoryWrite(scope: run.map { .workflowRun($0) } ?? .agent, key: key, operation: .put(value))) { result in
                    if case .failure(let error) = result { logger.error("workflow run \(run ?? "?"): memory key \(key) not written: \(error)") }
                }
            }
        }
        workflows = engine
        engine.apply(definitions)
        if !previous.isEmpty { logger.info("workflows: \(previous.count) unfinished run(s) from the agent's previous run") }
        // Known at once (a schedule's overlap rule sees them going); advanced after the
        // coordinator has recovered its runs, which the steps find again.
        engine.load(previous)
        loop.schedule(after: 0) { engine.resume() }
        engine.awaitsFleet = fleet != nil
    }

    /// The fleet's database answered (the ``FleetBridge`` calls it once): the shared queue's
    /// claims and wakeups begin, and the workflow engine takes its leases (this agent's runs
    /// of an earlier life, and any whose lease lapsed); then `ready` is called.
    package func fleetJoined(ready: @escaping () -> Void) {
        guard let fleet, let tasks else { return ready() }
        tasks.fleetJoined()
        let inbox = loop.inbox
        fleet.listen { inbox.post { tasks.fleetWakeup() } }
        takeWorkflowLeases(then: ready)
    }

    /// The workflow engine's start token in the fleet's store, then its leases and `then`;
    /// tried again every poll while the database does not answer.
    private func takeWorkflowLeases(then ready: @escaping () -> Void) {
        guard !host.isStopping else { return }
        guard let fleet, workflows != nil else { return ready() }
        let done = LoopOwned(ready)
        let store = fleet.workflowStore, settings = fleet.settings
        let inbox = loop.inbox
        Task.detached {
            let token = await Result { try await store.startToken(holder: settings.agentID) }
            inbox.post {
                let host = self
                switch token {
                case .success(let token):
                    host.workflows?.joinFleet(FleetWorkflowState(store: store, holder: settings.agentID, token: token, lease: settings.lease, poll: settings.poll))
                    done.value()
                case .failure(let error):
                    host.logger.warning("workflows: cannot take their leases in the fleet's store (\(error)); trying again in \(ProcessPolicy.format(settings.poll)) s")
                    host.loop.schedule(after: settings.poll) { [weak host] in host?.takeWorkflowLeases(then: done.value) }
                }
            }
        }
    }

    /// The fleet's workflow store (its runs are taken once the engine joins, not loaded here),
    /// else the store's with its unfinished runs; nil: runs are kept in memory only.
    private func openWorkflowStore() -> (store: any WorkflowStore, unfinished: [(run: WorkflowRun, steps: [WorkflowStepRecord])])? {
        if let fleet {
            // Its runs are taken once the fleet is joined (``fleetJoined(ready:)``).
            return (fleet.workflowStore, [])
        } else if let storage {
            do {
                let (store, unfinished) = try storage.openWorkflowStore()
                return (store, unfinished)
            } catch {
                logger.error("workflows: cannot read their runs from the store (\(error)); runs are kept in memory only")
            }
        }
        return nil
    }

    // MARK: Stopping

    /// The agent stops: schedules fire no more, workflows advance no more, task runs get their
    /// grace to end.
    package func shutDown() {
        scheduler?.shutDown()
        workflows?.shutDown()
        tasks?.shutDown()
    }

    /// Whether task runs still end (the agent waits for them before it goes).
    package var hasRunsGoing: Bool { tasks?.hasRunsGoing == true }

    /// A second stop signal: what still runs is killed now.
    package func endStop() { tasks?.endStop() }

    /// The last notifications are sent (or given up after `timeout` seconds).
    package func stopNotifications(timeout: Double) { notifier?.stop(timeout: timeout) }
}
