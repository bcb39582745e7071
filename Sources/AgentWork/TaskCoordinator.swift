import AgentBase
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

/// Decides which task run goes when: the queue of each task (priority, then not-before, then
/// arrival), each task's `max_concurrent`, retries with backoff, timeouts, cancellation, and
/// the runs a dead agent left. Runs are carried out by a ``TaskRunner`` per task type.
///
/// Loop thread only: the supervisor's loop drives it through the calls below (the commands,
/// a reload, the start and end of the agent); runners report on the loop too. Every change of
/// a run is handed to the ``RunStore`` (which batches it off the loop) and announced on the
/// event bus (`task.queued`, `task.started`, `task.succeeded`…).
@LoopActor
package final class TaskCoordinator {
    /// How an attempt ended, for whoever notifies about it (``attemptEnded``).
    package struct AttemptEnd {
        /// The definition the attempt ran under.
        package var task: TaskDefinition
        /// The run after the attempt (status `retrying` when a retry follows).
        package var run: TaskRun
        package var outcome: TaskRunOutcome
        package var retryFollows: Bool
    }

    /// A run being carried out.
    package struct Active {
        package var definition: TaskDefinition
        package var runner: any TaskRunner
        package var attempt: Int
        /// Monotonic start, for the execution time.
        package var startedMonotonic: Double
        package var timeoutTimer: Int?
        /// The declared executor it runs on (nil: the task's implicit one).
        package var executor: String?
    }

    package let loop: EventLoop
    package let logger: Logger
    /// This agent's name (its folder's), recorded as the agent of each attempt outside a fleet.
    package var agentName: String?
    /// Event conditions that could not be decided (a pattern over its step budget), counted and logged.
    package let undecidedConditions: UndecidedConditions
    /// Where runs are recorded (nil: in memory only, gone at the end of the agent).
    package let store: (any RunStore)?
    package private(set) var definitions: [String: TaskDefinition] = [:]
    private var inputValidators: [String: JSONSchemaValidator] = [:]
    package private(set) var outputValidators: [String: JSONSchemaValidator] = [:]
    /// Runners by task type; `"<module>.<type>"` types without their own go to ``moduleRunner``.
    var runners: [String: any TaskRunner] = [:]
    package var moduleRunner: (any TaskRunner)?
    /// Every unfinished run, by id.
    package var runs: [String: TaskRun] = [:]
    package var queues: [String: RunQueue] = [:]
    var delayed = DelayedRuns()
    var delayTimer: (id: Int, at: Double)?
    package internal(set) var active: [String: Active] = [:]
    package var runningCount: [String: Int] = [:]
    /// Finished runs kept in memory (the newest ``recentLimit``): `task runs` without a store,
    /// and answers that must not wait for the store's writer.
    package internal(set) var recent: [String: TaskRun] = [:]
    var recentOrder: [String] = []
    /// Without a store: the attempts of the runs in ``runs`` and ``recent``.
    package var attemptLog = AttemptLog()
    var recentStart = 0
    /// The recent runs that are large (``recentLargeLimit``), oldest first from ``recentLargeStart``.
    var recentLarge: [String] = []
    var recentLargeStart = 0
    /// The ids of the runs last let go from ``recent`` as large (a miss of one waits for the
    /// store's writes before it says "no run"), at most ``recentLimit``.
    var letGo = LetGoRuns()
    package let recentLimit: Int
    /// Requests waiting for a run to finish (`--wait`).
    package var waiters: [String: [(TaskRun) -> Void]] = [:]
    private var sequence = 0
    /// While a batch of runs is submitted: their records, written and announced after the
    /// runners sent the runs off (nil: recorded as they come).
    private var held: [(TaskRun, RuntimeEvent, Bool)]?
    /// Tasks whose starts wait for the next loop turn (``startSlice``), and whether a dispatch
    /// of them now must start one run whatever the turn has spent.
    var dispatchLater: Set<String> = []
    var dispatchForced = false
    /// Why a running run is being cancelled, when not at a user's request (see ``cancel(_:why:)``).
    private var cancelReasons: [String: String] = [:]
    /// Attempts that ended, by task and how (`succeeded`, `failed`, `timed_out`, `cancelled`,
    /// `interrupted`), over the agent's life: the metrics.
    package private(set) var endedAttempts: [String: [String: Int]] = [:]
    /// Runs that ended `abandoned`, by task, over the agent's life: the metrics.
    package var abandonedRuns: [String: Int] = [:]
    /// Unfinished runs by task (kept as they change: status and metrics never count `runs`).
    private var unfinishedCount: [String: Int] = [:]
    /// The bytes of input text the unfinished runs hold (``RunInput``), bounded by
    /// ``heldInputLimit`` for the runs requests ask for.
    package private(set) var heldInputBytes = 0
    /// The bytes of input text of requested runs waiting for the store's commit (counted
    /// against ``heldInputLimit`` too).
    var pendingInputBytes = 0
    /// ``defaultHeldInputLimit``, in this agent (tests lower it).
    package var heldInputLimit = TaskCoordinator.defaultHeldInputLimit
    private let idPrefix: String
    package internal(set) var stopping = false
    /// The fleet's shared queue (nil: this agent keeps its queue to itself, in memory).
    package var shared: SharedQueueState?
    /// The stop's end: every attempt ended (or was killed at the grace's deadline).
    var stopEnded = false
    var stopDeadline: Int?

    // MARK: Assignment (see TaskCoordinator+Executors.swift)

    /// The declared executors (none: every task runs on its implicit executor).
    package var pool = ExecutorPool()
    /// `"assignment"` of the settings.
    package var assignment = AssignmentSettings()
    /// Strategies chosen at run time (`task set-strategy`, kept in the store): they win over
    /// the settings'.
    package var chosenStrategy: AssignmentStrategy?
    package var chosenTaskStrategies: [String: AssignmentStrategy] = [:]
    /// Runs assigned by hand, by executor, waiting for its room.
    package var pinned: [String: RunQueue] = [:]
    /// Unfinished and running runs by priority rank (the queue's size by priority).
    package var unfinishedByRank = [0, 0, 0, 0]
    package var runningByRank = [0, 0, 0, 0]
    /// Seconds from due to start, over the agent's life.
    package var waits = WaitFigures()
    /// Runs of people (executors with a `user`).
    package var personRunner: PersonTaskRunner?
    /// Where the strategies chosen at run time and the drains are kept.
    package var assignmentStore: (any AssignmentStore)?
    /// Executors the store says are drained, for the next ``configureExecutors(_:assignment:)``.
    package var restoredDrains: Set<String> = []

    /// Announces a change of a run on the event bus: (event type, payload).
    package var publish: (RuntimeEvent, JSONObject, _ cascade: Int) -> Void = { _, _, _ in }
    /// Called once at the end of every attempt: the hook of the notifications.
    package var attemptEnded: (AttemptEnd) -> Void = { _ in }

    package init(loop: EventLoop, store: (any RunStore)?, logger: Logger, recentLimit: Int = 1_000) {
        self.loop = loop
        self.store = store
        self.logger = logger
        undecidedConditions = UndecidedConditions(logger: logger)
        self.recentLimit = max(recentLimit, 1)
        // Run ids: the prefix (start time and a random part) and a counter.
        idPrefix = RunIDPrefix.make()
    }

    /// The runner of `type` ("command", or one module task type).
    package func register(_ runner: any TaskRunner, for type: String) { runners[type] = runner }

    package func runner(for type: String) -> (any TaskRunner)? {
        runners[type] ?? (type.contains(".") ? moduleRunner : nil)
    }

    // MARK: Definitions

    /// Takes the definitions of the settings (at start and at every reload). Running runs go
    /// on under the definition they started with; queued runs of a task that is gone fail.
    package func apply(_ tasks: [TaskDefinition]) {
        definitions = Dictionary(tasks.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        inputValidators = [:]
        outputValidators = [:]
        for task in tasks {
            if let schema = task.outputSchema, let validator = try? JSONSchemaValidator(schema: schema) { outputValidators[task.name] = validator }
            guard let schema = task.inputSchema, let validator = try? JSONSchemaValidator(schema: schema) else { continue }
            inputValidators[task.name] = validator
        }
        for (id, run) in runs where definitions[run.task] == nil && active[id] == nil {
            finish(id, run, status: .failed, error: "the task \"\(run.task)\" was removed from the settings before this run started")
        }
        for name in definitions.keys { dispatch(name) }
    }

    /// The validator of `task`'s input schema (nil: it has none), to check an input off the loop.
    package func inputValidator(for task: String) -> JSONSchemaValidator? { inputValidators[task] }

    /// The problems of `input` for `task` (its nesting, unless the caller checked it; its input
    /// schema), with their pointers.
    package func inputProblems(_ input: JSONValue, task: String, nestingChecked: Bool = false) -> [(pointer: String, message: String)] {
        if !nestingChecked, let problem = InputNesting.problem(input) { return [problem] }
        guard let validator = inputValidators[task] else { return [] }
        return validator.validate(input).map { ("/input" + $0.instanceLocation, $0.message) }
    }

    // MARK: Runs

    /// Queues a run of `task` (which must be defined; the input already checked) and starts it
    /// if it may run now. Returns the run as queued.
    @discardableResult
    package func submit(task: String, input: JSONValue, priority: TaskRun.Priority, notBefore: Double?, requestedBy: TaskRun.Origin,
                rerunOf: String? = nil) -> TaskRun {
        var run = prepare(task: task, input: input, priority: priority, notBefore: notBefore, requestedBy: requestedBy)
        run.rerunOf = rerunOf
        return submit(run)
    }

    /// A run with its id, not queued yet: for a caller that commits the request together with
    /// its own state first (a schedule's fire), then hands it to ``submit(_:)``.
    package func prepare(task: String, input: JSONValue, priority: TaskRun.Priority, notBefore: Double? = nil, requestedBy: TaskRun.Origin,
                 cascade: Int = 0) -> TaskRun {
        sequence += 1
        var run = TaskRun(id: "\(idPrefix)-\(sequence)", task: task, input: input, priority: priority, notBefore: notBefore, requestedBy: requestedBy)
        run.sequence = sequence
        run.cascade = cascade
        return run
    }

    /// Queues a run made by ``prepare(task:input:priority:notBefore:requestedBy:)`` and starts
    /// it if it may run now. A run already known (recovered from the store) is left as it is.
    @discardableResult
    package func submit(_ prepared: TaskRun) -> TaskRun {
        submit([prepared])[0]
    }

    /// Queues runs made by ``prepare(task:input:priority:notBefore:requestedBy:)`` together
    /// (the fires of one instant): all are queued first, then each task dispatched once, so
    /// that the runs that may start go to their runners in one pass, and the runners send
    /// them off (``TaskRunner/flush()``) before the runs' changes are recorded and announced.
    /// Returns them as queued (or started), in order.
    @discardableResult
    package func submit(_ prepared: [TaskRun]) -> [TaskRun] {
        let outermost = held == nil
        if outermost { held = [] }
        defer { if outermost { releaseHeldRecords() } }
        var tasks: [String] = []
        var queuedShared: [String: TaskRun] = [:]
        for run in prepared {
            guard runs[run.id] == nil, recent[run.id] == nil else { continue }
            // A fleet's run waits in the shared queue for whichever agent claims it.
            if shared != nil {
                queuedShared[run.id] = submitShared(run)
                continue
            }
            runs[run.id] = run
            countUnfinished(run, by: 1)
            record(run, event: .taskQueued)
            guard definitions[run.task] != nil else {
                finish(run.id, run, status: .failed, error: "the task \"\(run.task)\" is no longer in the settings")
                continue
            }
            enqueue(run)
            if !tasks.contains(run.task) { tasks.append(run.task) }
        }
        for task in tasks { dispatch(task, sendEarly: outermost && prepared.count > 1) }
        if outermost, prepared.count > 1 {
            var seen = Set<ObjectIdentifier>()
            for task in tasks {
                guard let type = definitions[task]?.type, let runner = self.runner(for: type), seen.insert(ObjectIdentifier(runner)).inserted else { continue }
                runner.flush()
            }
        }
        // Queued or started, a large input is held as its text alone from here on.
        for run in prepared where run.held.textBytes >= RunInput.textOnlyFrom { runs[run.id]?.held.compact() }
        return prepared.map { runs[$0.id] ?? recent[$0.id] ?? queuedShared[$0.id] ?? $0 }
    }

    /// Records held back while a batch is handed to the runners, and announces them (in order).
    private func releaseHeldRecords() {
        guard let records = held else { return }
        held = nil
        for (run, event, persist) in records { record(run, event: event, persist: persist) }
    }

    /// Cancels a run: a queued or retrying one at once, a running one by its runner (the
    /// answer then comes with its end). nil when there is no such unfinished run. `why`: who
    /// or what cancels it, when not a user (the run's error says so, not "at a user's request").
    package func cancel(_ id: String, why: String? = nil) -> TaskRun? {
        guard let run = runs[id] else { return nil }
        if let attempt = active[id] {
            if let why { cancelReasons[id] = why }
            attempt.runner.cancel(runID: id, reason: .cancelled)
            return runs[id] ?? recent[id]
        }
        finish(id, run, status: .cancelled, error: "cancelled before it ran" + (why.map { ": \($0)" } ?? ""))
        return recent[id]
    }

    /// Calls `done` with the run once it has finished (at once if it has).
    package func whenFinished(_ id: String, _ done: @escaping (TaskRun) -> Void) {
        if runs[id] == nil, let run = recent[id] { return done(run) }
        // Finished and let go from memory (a large run): the store has it.
        if runs[id] == nil, shared == nil, store != nil { return whenStored(id, done) }
        waiters[id, default: []].append(done)
        // In a fleet another agent may carry it out: the store says when it ends.
        if shared != nil { watchSharedRun(id) }
    }

    /// A run known in memory: unfinished, or among the recently finished.
    package func knownRun(_ id: String) -> TaskRun? { runs[id] ?? recent[id] }

    /// Takes the unfinished runs of an earlier life of the agent (from the store, at start):
    /// queued ones queue again; one that was running when the agent died is interrupted: it
    /// runs again at once, whatever its retry policy, unless its interruptions pass the task's
    /// `max_interruptions` (then it ends `abandoned`).
    package func recover(_ previous: [TaskRun]) {
        for var run in previous where runs[run.id] == nil {
            sequence += 1
            run.sequence = sequence
            runs[run.id] = run
            countUnfinished(run, by: 1)
            guard let definition = definitions[run.task] else {
                finish(run.id, run, status: .failed, error: "the task \"\(run.task)\" is no longer in the settings")
                continue
            }
            switch run.status {
            case .running:
                // Running, or its end was never written (it waited for a full disk when the agent was killed).
                let outcome = TaskRunOutcome(status: .interrupted, error: "interrupted: the agent stopped before the end of attempt \(run.attempt) was written")
                logger.notice("task run \(run.id) (\(run.task)) was running when the agent stopped (or its end was not written): interrupted")
                endAttempt(run, definition: definition, outcome: outcome, executionTime: nil)
            case .retrying:
                delay(run.id, until: run.nextAttemptAt ?? 0)
            default:
                enqueue(run)
            }
        }
        // Due already (attempts the stop or a death interrupted): queued in their place beside
        // the others now, not a turn after them (when the others would have taken their room).
        for id in delayed.popDue(Date().timeIntervalSince1970) {
            if let run = runs[id], active[id] == nil { insertQueued(run) }
        }
        for name in definitions.keys { dispatch(name) }
    }

    /// Counts `run` among the unfinished (`change` 1) or no longer (−1): by task, by priority,
    /// and the input text it holds.
    private func countUnfinished(_ run: TaskRun, by change: Int) {
        unfinishedCount[run.task, default: 0] += change
        unfinishedByRank[run.priority.rank] += change
        heldInputBytes += change * run.held.textBytes
        if change < 0 { HeapTrim.shared.released(run.held.textBytes) }
    }

    /// Each task's figures for the metrics: runs queued (or waiting for a retry), running, and
    /// attempts ended by outcome.
    package var figures: [TaskFigures] {
        definitions.keys.sorted().map { name in
            let running = runningCount[name] ?? 0
            return TaskFigures(task: name, queued: max((unfinishedCount[name] ?? 0) - running, 0), running: running,
                                             ended: endedAttempts[name] ?? [:], abandoned: abandonedRuns[name] ?? 0)
        }
    }

    /// Starts an attempt of `run`, on `executor` (a declared one, chosen by the caller and
    /// counted in the pool already) or on the task's implicit executor.
    package func start(_ run: TaskRun, definition: TaskDefinition, executor: String? = nil, person: Bool = false) {
        var run = run
        let now = Date().timeIntervalSince1970
        // Sent ahead: the runner holds it until its instant, which is when it starts.
        let ahead = run.notBefore.flatMap { $0 > now && executor == nil && !person ? $0 : nil }
        waits.add(max(now - (run.nextAttemptAt ?? run.notBefore ?? run.queuedAt), 0))
        // A run claimed from the fleet's queue was written by its claim as it starts (running,
        // its attempt, started_at): written again only if this changes it.
        let claimedAsIs = run.claim != nil && run.executor == executor
        run.executor = executor
        // A run claimed from the fleet's queue is already `running` with its attempt counted.
        if run.claim == nil {
            run.attempt += 1
            run.status = .running
            run.startedAt = ahead ?? now
            run.nextAttemptAt = nil
        }
        run.attemptRecord = TaskAttempt(number: run.attempt, startedAt: run.startedAt, executor: executor, agent: attemptAgent(run))
        runs[run.id] = run
        guard let runner = person ? personRunner : runner(for: definition.type) else {
            if let executor, let member = pool.index(of: executor) { pool.end(member, task: definition.name, now: Date().timeIntervalSince1970) }
            record(run, event: .taskStarted)
            let outcome = TaskRunOutcome(status: .failed, error: "no runner for task type \"\(definition.type)\" in this agent\(definition.type.contains(".") ? " (module task handlers are not available yet)" : "")")
            endAttempt(run, definition: definition, outcome: outcome, executionTime: 0)
            return
        }
        var attempt = Active(definition: definition, runner: runner, attempt: run.attempt, startedMonotonic: EventLoop.now() + max((ahead ?? now) - now, 0), executor: executor)
        if let timeout = definition.timeout {
            let id = run.id
            attempt.timeoutTimer = loop.schedule(after: timeout + max((ahead ?? now) - now, 0)) { [weak self] in
                guard let self, var current = active[id] else { return }
                current.timeoutTimer = nil
                active[id] = current
                logger.notice("task run \(id) (\(definition.name)) timed out after \(timeout) s: ending it")
                current.runner.cancel(runID: id, reason: .timedOut)
            }
        }
        active[run.id] = attempt
        runningCount[definition.name, default: 0] += 1
        runningByRank[run.priority.rank] += 1
        record(run, event: .taskStarted, persist: !claimedAsIs)
        let id = run.id, number = run.attempt
        var start = TaskRunStart(runID: id, idempotencyKey: run.idempotencyKey, attempt: number, task: definition, input: .null,
                                 executor: executor, notBefore: ahead)
        start.held = run.held
        if !runner.readsInputValue { start.held.compact() }
        runner.start(start) { [weak self] report in
            self?.handle(report, id: id, attempt: number)
        }
    }

    private func handle(_ report: TaskRunReport, id: String, attempt number: Int) {
        guard case .finished(var outcome) = report else { return }
        guard let attempt = active[id], attempt.attempt == number, let run = runs[id] else { return }
        active[id] = nil
        if let timer = attempt.timeoutTimer { loop.cancel(timer) }
        runningCount[attempt.definition.name, default: 1] -= 1
        runningByRank[run.priority.rank] -= 1
        if let executor = attempt.executor {
            outcome = executorEnded(executor, task: attempt.definition.name, outcome: outcome)
        }
        if stopping {
            if outcome.status == .interrupted {
                recordInterrupted(run, attempt: attempt)
            } else {
                // It ended on its own meanwhile: its result is its own.
                endAttempt(run, definition: attempt.definition, outcome: outcome, executionTime: max(EventLoop.now() - attempt.startedMonotonic, 0))
            }
            if active.isEmpty { endStop() }
            return
        }
        endAttempt(run, definition: attempt.definition, outcome: outcome, executionTime: max(EventLoop.now() - attempt.startedMonotonic, 0))
        if let executor = attempt.executor {
            executorFreed(executor, task: attempt.definition.name)
        } else {
            dispatch(attempt.definition.name)
        }
    }

    /// Forgets a run this agent no longer holds (the fleet's queue has it): it waits there for
    /// its retry, or another agent took it over.
    package func release(_ id: String) {
        guard let run = runs.removeValue(forKey: id) else { return }
        countUnfinished(run, by: -1)
        if let attempt = active.removeValue(forKey: id) {
            if let timer = attempt.timeoutTimer { loop.cancel(timer) }
            runningCount[attempt.definition.name, default: 1] -= 1
            runningByRank[run.priority.rank] -= 1
        }
    }

    /// Takes runs claimed from the fleet's queue and starts them (``SharedQueueState``).
    package func adopt(_ claimed: [TaskRun]) {
        for run in claimed {
            guard let definition = definitions[run.task], runs[run.id] == nil else {
                // Not ours to run after all (the task left the settings meanwhile).
                handBack(run)
                continue
            }
            countUnfinished(run, by: 1)
            if abandonsClaimed(run, definition: definition) { continue }
            guard !pool.isEmpty, pool.isTaken(run.task) else {
                start(run, definition: definition)
                continue
            }
            // Through the agent's declared executors, by the task's strategy, as a run queued here.
            if !adoptOnExecutor(run, definition: definition) {
                countUnfinished(run, by: -1)
                handBack(run)
            }
        }
    }

    /// A claimed run this agent cannot carry out after all: back to the shared queue now, as
    /// the attempt it was before the claim (for any agent).
    private func handBack(_ run: TaskRun) {
        var back = run
        back.status = .retrying
        back.nextAttemptAt = Date().timeIntervalSince1970
        back.attempt -= 1
        // The claim began no attempt: none to record (the store shows none past the run's).
        back.attemptRecord = nil
        store?.record(back)
    }

    /// The one place an attempt ends: the run finishes or waits for its retry, and
    /// ``attemptEnded`` is told.
    package func endAttempt(_ run: TaskRun, definition: TaskDefinition, outcome: TaskRunOutcome, executionTime: Double?) {
        countAttempt(definition.name, outcome.status)
        var run = run
        var outcome = outcome
        if let why = cancelReasons.removeValue(forKey: run.id), outcome.status == .cancelled {
            outcome.error = "cancelled (with everything it started): \(why)"
        }
        endAttemptRecord(&run, outcome)
        // Walking a MiB of small containers held the loop 40–80 ms: once is enough.
        run.output = outcome.outputNestingChecked ? outcome.output : outcome.output.map(InputNesting.keptOutput)
        run.error = outcome.error
        run.exitCode = outcome.exitCode
        run.signal = outcome.signal
        run.stderrTail = outcome.stderrTail
        run.usage = outcome.usage
        run.executionTime = executionTime
        // Not the work's fault, nor an attempt of its retry policy: bounded by max_interruptions.
        if outcome.status == .interrupted { return interrupted(run, definition: definition, outcome: outcome) }
        let retries = definition.retries
        // The attempts the work itself ended (those interrupted are not the policy's).
        let completed = run.attempt - run.interruptions
        if [.failed, .timedOut].contains(outcome.status), completed <= retries.max {
            // At a stop too: the run waits as `retrying` in the store, and the next start takes it.
            let due = Date().timeIntervalSince1970 + Self.retryDelay(retries, retry: completed)
            return awaitRetry(run, due: due, definition: definition, outcome: outcome)
        }
        let status: TaskRun.Status = switch outcome.status {
        case .succeeded: .succeeded
        case .timedOut: .timedOut
        case .cancelled: .cancelled
        case .failed, .interrupted: .failed
        }
        let finished = finish(run.id, run, status: status, error: outcome.error)
        attemptEnded(AttemptEnd(task: definition, run: finished, outcome: outcome, retryFollows: false))
    }

    /// One more attempt ended `status`, for the metrics.
    package func countAttempt(_ task: String, _ status: TaskRunOutcome.Status) {
        endedAttempts[task, default: [:]][status.rawValue, default: 0] += 1
    }

    /// The run waits as `retrying` for its next attempt, due at `due` (in this agent, or in
    /// the fleet's queue for whichever agent has room then).
    package func awaitRetry(_ run: TaskRun, due: Double, definition: TaskDefinition, outcome: TaskRunOutcome) {
        var run = run
        run.status = .retrying
        run.nextAttemptAt = due
        runs[run.id] = run
        record(run, event: .taskRetrying)
        attemptEnded(AttemptEnd(task: definition, run: run, outcome: outcome, retryFollows: true))
        if shared != nil {
            release(run.id)
            return
        }
        delay(run.id, until: due)
    }

    /// `initial_delay × multiplier^(n-1)`, at most `max_delay`, for the n-th retry.
    nonisolated package static func retryDelay(_ policy: TaskDefinition.RetryPolicy, retry n: Int) -> Double {
        let exponent = Double(max(n - 1, 0))
        let delay = policy.initialDelay * pow(policy.multiplier, exponent)
        return delay.isFinite ? min(delay, policy.maxDelay) : policy.maxDelay
    }

    /// Ends a run for good: recorded, announced, kept among the recent, waiters answered.
    @discardableResult
    package func finish(_ id: String, _ run: TaskRun, status: TaskRun.Status, error: String?) -> TaskRun {
        var run = run
        run.status = status
        run.error = error ?? run.error
        run.endedAt = Date().timeIntervalSince1970
        run.nextAttemptAt = nil
        if let removed = runs.removeValue(forKey: id) { countUnfinished(removed, by: -1) }
        remember(run)
        record(run, event: .task(status))
        if let list = waiters.removeValue(forKey: id) { for done in list { done(run) } }
        return run
    }

    /// Records the run's change in the store (unless `persist` is false: the store has it
    /// already) and announces it.
    package func record(_ run: TaskRun, event: RuntimeEvent, persist: Bool = true) {
        if held != nil {
            held?.append((run, event, persist))
            return
        }
        if persist { store?.record(run) }
        if store == nil { attemptLog.note(run) }
        var payload: JSONObject = ["run_id": .string(run.id), "task": .string(run.task), "attempt": .number(JSONNumber(run.attempt)),
                                   "status": .string(run.status.rawValue)]
        if let error = run.error, run.status != .running, run.status != .queued { payload["error"] = .string(error) }
        if let code = run.exitCode, run.status != .running { payload["exit_code"] = .number(JSONNumber(Int(code))) }
        if let next = run.nextAttemptAt { payload["next_attempt_at"] = .string(TaskRun.iso(next)) }
        if let executor = run.executor { payload["executor"] = .string(executor) }
        publish(event, payload, run.cascade)
    }
}
