import AgentLoop
import Foundation
import JSONSchema
import Logging

/// Runs workflows from a persisted step log: what a run does next is worked out from its
/// definition (the copy it started with) and the records of its steps — never by replaying
/// code. Each step's start is committed before its effect begins (a task submitted, an event
/// published, a chat sent) and its result before anything after it starts; after a crash every
/// run resumes from its last committed step, and a step that was in flight runs again with the
/// same idempotency key.
///
/// Loop thread only. The supervisor drives it through narrow calls: ``apply(_:)`` (settings),
/// ``recover(_:)`` (start), ``eventArrived(type:source:time:payload:)`` (only for the types in
/// ``wantedTypes``), the commands, ``shutDown()``.
@LoopActor
package final class WorkflowEngine {
    /// A run in memory while it is unfinished.
    package final class LiveRun {
        package var run: WorkflowRun
        package let definition: WorkflowDefinition
        /// Its input's bytes as JSON text, counted in ``heldInputBytes`` while it is live.
        package var inputBytes = 0
        /// The current generation's records, by step id.
        package var steps: [String: WorkflowStepRecord] = [:]
        /// Every record in start order (the log `workflow show` lists).
        package var log: [WorkflowStepRecord] = []
        /// The latest output of each step (references read these).
        package var outputs: [String: JSONValue] = [:]
        /// The highest attempt each step has had (a revisit takes the next).
        package var attempts: [String: Int] = [:]
        /// Records whose latest change is not committed yet: their effect waits.
        package var unconfirmed: [String: Int] = [:]
        package var pendingCommits = 0
        package var runDirty = true
        /// Whether the store has it (a commit of it written, or read from it): a fleet renews
        /// the leases of those only.
        package var stored = false
        /// Steps whose effect is going in this life of the agent.
        package var launched: Set<String> = []
        /// Prepared task runs, by step (submitted once the step's start is committed).
        package var prepared: [String: TaskRun] = [:]
        /// Task runs of steps found again after a restart, being read from the store, or whose
        /// large input's text is being made (see ``submitWithText(_:_:_:)``).
        package var finding: Set<String> = []
        /// Task steps whose large input is being checked off the loop before they begin (see
        /// ``checkAside(_:_:task:input:)``).
        package var checking: [String: Int] = [:]
        /// The last check's number (a check that comes back after its step was begun again is not its own).
        package var lastCheck = 0
        package var timers: [String: Int] = [:]
        /// The first matching event for each `wait_event` step armed but not launched yet (its
        /// start not committed): the step takes it at its launch.
        package var heldEvents: [String: JSONValue] = [:]
        package var waiters: [(WorkflowRun, [WorkflowStepRecord]) -> Void] = []
        /// Called once everything handed to the store so far is committed (answers that
        /// promise durability: a run started, an approval recorded).
        /// Each is told whether all of it was kept (written, or held where a kill does not lose it).
        package var afterCommit: [(Bool) -> Void] = []
        /// A commit since the last call of ``afterCommit`` was neither written nor kept.
        package var unkept = false
        /// Steps this advance may still begin (see ``WorkflowEngine/beginsPerTurn``).
        package var beginBudget = 0

        package init(run: WorkflowRun, definition: WorkflowDefinition) {
            self.run = run
            self.definition = definition
        }

        package func record(_ record: WorkflowStepRecord) {
            steps[record.stepID] = record
            if let index = log.lastIndex(where: { $0.stepID == record.stepID && $0.generation == record.generation }) {
                log[index] = record
            } else {
                log.append(record)
            }
            attempts[record.stepID] = max(attempts[record.stepID] ?? 0, record.attempt)
            if record.status == .succeeded, let output = record.output { outputs[record.stepID] = output }
        }
    }

    /// A workflow's `on_event`, compiled.
    package struct Trigger {
        package var workflow: String
        package var condition: JSONSchemaValidator?
    }

    package let loop: EventLoop
    package let store: (any WorkflowStore)?
    package let tasks: TaskCoordinator
    package let logger: Logger
    /// Event conditions that could not be decided (a pattern over its step budget), counted and logged.
    package let undecidedConditions: UndecidedConditions
    package private(set) var definitions: [String: WorkflowDefinition] = [:]
    private var inputValidators: [String: JSONSchemaValidator] = [:]
    var triggers: [String: [Trigger]] = [:]
    package var live: [String: LiveRun] = [:]
    /// Runs finished whose last commit is not confirmed written yet (one that failed stays
    /// until the run leaves ``recent``: the store writes it later, unseen by the engine).
    private(set) var lastFinished: [String: LiveRun] = [:]
    /// Waiting `wait_event` steps, by event type and correlation values, armed when the step
    /// starts (before its start is committed: an event in that gap is held for it, not lost).
    package var waits = WaitIndex()
    /// The largest signal payload, in bytes of its JSON text (`/events/max_payload_bytes`).
    package var payloadLimit = EventSettings.defaultPayloadBytes
    /// Finished runs kept in memory (the newest ``recentLimit``), with their logs.
    package private(set) var recent: [String: (run: WorkflowRun, steps: [WorkflowStepRecord])] = [:]
    private var recentOrder: [String] = []
    /// The recent runs that are large (``recentLargeLimit``), oldest first.
    private var recentLarge: [String] = []
    package let recentLimit = 1_000
    private let idPrefix: String
    private var sequence = 0
    package var stopping = false
    /// The fleet's side: runs held under leases in the shared store (nil: this agent owns its runs).
    package var fleet: FleetWorkflowState?
    /// In a fleet not joined yet: runs are refused until ``joinFleet(_:)`` (``FleetNotJoined``).
    package var awaitsFleet = false
    /// Event types some step waits for or some workflow is triggered by.
    package internal(set) var wantedTypes: Set<String> = []

    /// Announces a run's change on the event bus (`workflow.started`, `workflow.succeeded`…),
    /// with the run's cascade depth.
    package var publish: (RuntimeEvent, JSONObject, Int) -> Void = { _, _, _ in }
    /// Emits a `publish` step's event: (type, payload, workflow name, the run's cascade depth).
    package var emit: (String, JSONValue, String, Int) -> Void = { _, _, _, _ in }
    /// How many runs, each started by an event of the one before, a chain of triggers may
    /// start (a cycle marked intended, or one through processes the settings cannot see):
    /// beyond, the event starts no run; one log line and a `workflow.cascade_stopped` event.
    nonisolated package static let deepestCascade = 32
    /// Steps one advance of a run begins at most: a parallel step of 10,000 branches is begun
    /// in slices, each begun slice's commit landing starts the next advance, so that one turn
    /// of the loop never does more than this many steps' work (it did all at once, ~20 s).
    nonisolated package static let beginsPerTurn = 64
    /// Asks the chatbot: (text, adapter, conversation, answer).
    package var ask: (String, String?, String, @escaping (Result<String, WorkflowError>) -> Void) -> Void = { _, _, _, answer in
        answer(.failure(WorkflowError(code: "unavailable", message: "this agent has no chatbot")))
    }
    /// Shared memory (until the memory store lands: nil, and `memory` in set steps fails).
    package var memoryRead: ((_ key: String, _ run: String?) -> JSONValue?)?
    package var memoryWrite: ((_ key: String, _ value: JSONValue, _ run: String?) -> Void)?
    /// Trigger cascades stopped, by workflow: logged the 1st, 10th, 100th… time.
    var cascadeStops = LogCounts()
    /// The inputs' bytes (as JSON text) of the runs in ``live``, bounded by ``heldInputLimit``
    /// (see ``heldInputProblem(workflow:adding:)``).
    package var heldInputBytes = 0
    /// The inputs' bytes of runs asked for whose first commit is pending.
    var pendingInputBytes = 0
    /// The most ``heldInputBytes`` may reach (``defaultHeldInputLimit`` unless a test says otherwise).
    package var heldInputLimit = WorkflowEngine.defaultHeldInputLimit
    /// Runs events would have started, left out for want of room: logged the 1st, 10th, 100th… time.
    var inputRefusals = LogCounts()
    /// Events not yet handed to all their waiting steps, oldest first (see ``eventArrived``).
    var arrivals: [EventArrival] = []
    /// Called when ``wantedTypes`` changes (the supervisor refreshes its routing then).
    package var wantedTypesChanged: () -> Void = {}
    /// The HTTP users and named tokens of the current settings with their role: who may answer
    /// an approval (set at start and at each reload).
    package var roles: [String: String] = [:]

    package init(loop: EventLoop, store: (any WorkflowStore)?, tasks: TaskCoordinator, logger: Logger) {
        self.loop = loop
        self.store = store
        self.tasks = tasks
        self.logger = logger
        undecidedConditions = UndecidedConditions(logger: logger)
        idPrefix = "wf-" + RunIDPrefix.make()
    }

    // MARK: Definitions

    /// Takes the settings' workflows (start and reload): new runs use them; runs going on keep
    /// the definition they started with.
    package func apply(_ workflows: [WorkflowDefinition]) {
        definitions = Dictionary(workflows.map { ($0.name, $0) }, uniquingKeysWith: { _, last in last })
        inputValidators = [:]
        triggers = [:]
        for workflow in workflows {
            if let schema = workflow.inputSchema, let validator = try? JSONSchemaValidator(schema: schema) { inputValidators[workflow.name] = validator }
            if let trigger = workflow.onEvent {
                triggers[trigger.type, default: []].append(Trigger(workflow: workflow.name, condition: trigger.condition.flatMap { try? JSONSchemaValidator(schema: $0) }))
            }
        }
        refreshWantedTypes()
    }

    package func inputProblems(_ input: JSONValue, workflow: String, nestingChecked: Bool = false) -> [(pointer: String, message: String)] {
        if !nestingChecked, let problem = InputNesting.problem(input) { return [problem] }
        guard let validator = inputValidators[workflow] else { return [] }
        return validator.validate(input).map { ("/input" + $0.instanceLocation, $0.message) }
    }

    // MARK: Runs

    /// Starts a run of `workflow` (defined; the input already checked). `inputBytes`: its
    /// input's bytes as JSON text (0: shared with the settings, a schedule's).
    @discardableResult
    package func start(_ workflow: WorkflowDefinition, input: JSONValue, requestedBy: String, cascade: Int = 0,
                       inputBytes: Int = 0, committed: (() -> Void)? = nil) -> WorkflowRun {
        var run = prepare(workflow, input: input, requestedBy: requestedBy)
        run.cascade = cascade
        let state = LiveRun(run: run, definition: workflow)
        hold(state, inputBytes: inputBytes)
        commit(state, [])
        if let committed { state.afterCommit.append { _ in committed() } }
        publish(.workflowStarted, ["run_id": .string(run.id), "workflow": .string(workflow.name), "version": .string(workflow.version)], run.cascade)
        return run
    }

    /// A new run of `workflow`, not started: whoever commits it (a schedule's fire, in the same
    /// transaction as the fire) hands it to ``adopt(_:)`` once it is committed.
    package func prepare(_ workflow: WorkflowDefinition, input: JSONValue, requestedBy: String) -> WorkflowRun {
        sequence += 1
        var run = WorkflowRun(id: "\(idPrefix)-\(sequence)", workflow: workflow, input: input, requestedBy: requestedBy)
        // In a fleet this agent holds it from its first write, under this life's token.
        if let fleet { run.claim = RunClaim(runID: run.id, holder: fleet.holder, fence: fleet.token, leaseUntil: 0) }
        run.agent = fleet?.holder ?? tasks.agentName
        return run
    }

    /// Starts runs made by ``prepare(_:input:requestedBy:)`` and already committed by their
    /// caller. When stopping they are left as committed: the next start resumes them.
    /// `inputBytes`: each one's input's bytes as JSON text (0: a schedule's, shared with the settings).
    package func adopt(_ runs: [WorkflowRun], inputBytes: Int = 0) {
        guard !stopping else { return }
        for run in runs where live[run.id] == nil && recent[run.id] == nil {
            // The definition it was prepared with: the current one unless a reload came between.
            let current = definitions[run.workflow].flatMap { $0.version == run.version ? $0 : nil }
            guard let definition = current ?? WorkflowSettings.parse(name: run.workflow, source: run.definition) else { continue }
            let state = LiveRun(run: run, definition: definition)
            state.runDirty = false
            state.stored = true
            hold(state, inputBytes: inputBytes)
            publish(.workflowStarted, ["run_id": .string(run.id), "workflow": .string(run.workflow), "version": .string(run.version)], run.cascade)
            advance(run.id)
        }
    }

    /// Calls `done` once the run has finished (at once if it has).
    package func whenFinished(_ id: String, _ done: @escaping (WorkflowRun, [WorkflowStepRecord]) -> Void) {
        if let state = live[id] { return state.waiters.append(done) }
        if let finished = recent[id] { done(finished.run, finished.steps) }
    }

    /// A run and its log from memory (unfinished or recently finished).
    package func known(_ id: String) -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        if let state = live[id] { return (state.run, state.log) }
        return recent[id]
    }

    /// A run and its log from memory when memory is the one to ask: unfinished, or finished and
    /// not confirmed written, or any recently finished one without a store. A finished run the
    /// store has is read from the store: the retention may have deleted it since.
    package func unwritten(_ id: String) -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        if let state = live[id] { return (state.run, state.log) }
        return store == nil || lastFinished[id] != nil ? recent[id] : nil
    }

    /// Takes the unfinished runs of an earlier life of the agent (from the store, at start) and
    /// resumes each from its last committed step.
    package func recover(_ previous: [(run: WorkflowRun, steps: [WorkflowStepRecord])]) {
        load(previous)
        resume()
    }

    /// Resumes every run ``load(_:)`` took (once the task coordinator has recovered its runs,
    /// which the steps find again).
    package func resume() {
        for id in live.keys.sorted() { advance(id) }
    }

    /// Takes the unfinished runs of an earlier life of the agent, without advancing them yet:
    /// from now on they are known (a schedule's overlap rule sees them going).
    package func load(_ previous: [(run: WorkflowRun, steps: [WorkflowStepRecord])]) {
        for (run, steps) in previous where live[run.id] == nil {
            guard let definition = WorkflowSettings.parse(name: run.workflow, source: run.definition) else {
                logger.error("workflow run \(run.id): its copy of the definition of \(run.workflow) cannot be read; the run fails")
                var failed = run
                failed.status = .failed
                failed.error = "the run's copy of its workflow definition cannot be read"
                failed.endedAt = Date().timeIntervalSince1970
                failed.revision += 1
                store?.commit(WorkflowCommit(runs: [failed], claim: failed.claim)) { _ in }
                continue
            }
            let state = LiveRun(run: run, definition: definition)
            state.runDirty = false
            state.stored = true
            for record in steps {
                state.log.append(record)
                state.attempts[record.stepID] = max(state.attempts[record.stepID] ?? 0, record.attempt)
                if record.status == .succeeded, let output = record.output { state.outputs[record.stepID] = output }
                if record.generation == run.generation { state.steps[record.stepID] = record }
            }
            // Measured here, once: the runs of an earlier life count against the bound too.
            hold(state, inputBytes: run.input.serializedLength(atMost: 4 * InputSize.largest) ?? 4 * InputSize.largest)
            logger.info("workflow run \(run.id) (\(run.workflow)) resumes from its step log (\(steps.count) step record(s))")
        }
    }

    /// The agent stops: nothing more starts; what is going stays in the step log as it is, and
    /// resumes at the next start.
    package func shutDown() {
        stopping = true
        if let fleet {
            for timer in [fleet.claimTimer, fleet.renewTimer].compactMap({ $0 }) { loop.cancel(timer) }
            fleet.claimTimer = nil
            fleet.renewTimer = nil
        }
        for state in live.values {
            for timer in state.timers.values { loop.cancel(timer) }
            state.timers = [:]
        }
    }

    /// Cancels a run: its going task runs are cancelled, its waits end.
    package func cancel(_ id: String, by: String) -> WorkflowRun? {
        guard let state = live[id] else { return nil }
        cancelGoing(in: state, steps: Set(state.steps.keys).union(state.checking.keys), reason: "the run was cancelled by \(by)")
        finishRun(state, status: .cancelled, error: "cancelled by \(by)")
        return state.run
    }

    // MARK: Working out what comes next

    package enum Outcome {
        case done(JSONValue?)
        case pending
        case failed(String)
    }

    /// Works out and starts what the run can do now; ends it when its steps are done.
    package func advance(_ id: String) {
        guard !stopping, let state = live[id], !state.run.status.isFinished, state.pendingCommits == 0 else { return }
        let steps = Array(state.definition.steps.dropFirst(min(state.run.resumeAt, state.definition.steps.count)))
        state.beginBudget = Self.beginsPerTurn
        switch evaluate(steps, state) {
        case .done:
            var output = JSONObject()
            for step in state.definition.steps { if let value = state.outputs[step.id] { output[step.id] = value } }
            state.run.output = .object(output)
            finishRun(state, status: .succeeded, error: nil)
        case .failed(let message):
            finishRun(state, status: .failed, error: message)
        case .pending:
            guard live[id] != nil, !state.run.status.isFinished else { return }
            let going = state.steps.values.filter { !$0.status.isFinished && !($0.kind == "condition" || $0.kind == "parallel") }
            // A step whose input is being checked is about to run: the run is not waiting.
            let status: WorkflowRun.Status = state.checking.isEmpty && !going.isEmpty && going.allSatisfy { $0.status == .waiting } ? .waiting : .running
            if status != state.run.status {
                state.run.status = status
                state.runDirty = true
            }
            if state.runDirty, state.pendingCommits == 0 { commit(state, []) }
        }
    }

    /// Goes through `steps` in order: finished ones are passed, the first that is not is
    /// started (or, when its start is committed, launched) or descended into.
    package func evaluate(_ steps: [WorkflowStep], _ state: LiveRun) -> Outcome {
        var last: JSONValue?
        for step in steps {
            if state.steps[step.id] == nil, state.checking[step.id] == nil {
                // Past the budget: the next advance (when the steps begun now are committed) goes on.
                guard state.beginBudget > 0 else { return .pending }
                state.beginBudget -= 1
                begin(step, state)
            }
            // Its large input is being checked: it begins when that is back.
            if state.checking[step.id] != nil { return .pending }
            guard let record = state.steps[step.id] else { return .failed("step \(step.id) could not start") }
            switch record.status {
            case .succeeded:
                // Memory a set step wrote is read by later steps from the store: wait for its commit.
                if record.output?["memory"] != nil, (state.unconfirmed[step.id] ?? 0) > 0 { return .pending }
                last = record.output
                continue
            case .failed, .timedOut:
                return .failed("step \(step.id) \(record.status == .timedOut ? "timed out" : "failed"): \(record.error ?? "no reason given")")
            case .cancelled:
                return .failed("step \(step.id) was cancelled: \(record.error ?? "")")
            case .running, .waiting:
                break
            }
            switch step.kind {
            case .condition(_, let then, let otherwise):
                let taken = record.detail["branch"] == "then" ? then : otherwise
                switch evaluate(taken, state) {
                case .done(let output):
                    finishStep(state, step.id, .succeeded, output: ["branch": record.detail["branch"] ?? "else", "output": output ?? .null])
                    last = state.steps[step.id]?.output
                case .failed(let message):
                    finishStep(state, step.id, .failed, error: message)
                    return .failed(message)
                case .pending:
                    return .pending
                }
            case .parallel(let branches, let join):
                let outcomes = branches.map { evaluate($0, state) }
                if join == .first, let winner = outcomes.firstIndex(where: { if case .done = $0 { true } else { false } }),
                   case .done(let output) = outcomes[winner] {
                    var others = Set<String>()
                    for (index, branch) in branches.enumerated() where index != winner { others.formUnion(Self.ids(branch)) }
                    cancelGoing(in: state, steps: others, reason: "branch \(winner) of \(step.id) finished first")
                    finishStep(state, step.id, .succeeded, output: ["branch": .number(JSONNumber(winner)), "output": output ?? .null])
                    last = state.steps[step.id]?.output
                    continue
                }
                let failures = outcomes.compactMap { outcome -> String? in
                    if case .failed(let message) = outcome { return message }
                    return nil
                }
                if join == .all, let first = failures.first {
                    cancelGoing(in: state, steps: Self.ids(branches.flatMap { $0 }), reason: "another branch of \(step.id) failed")
                    finishStep(state, step.id, .failed, error: first)
                    return .failed(first)
                }
                if join == .first, failures.count == branches.count {
                    let message = "every branch failed: " + failures.joined(separator: "; ")
                    finishStep(state, step.id, .failed, error: message)
                    return .failed(message)
                }
                if join == .all, outcomes.allSatisfy({ if case .done = $0 { true } else { false } }) {
                    let values: [JSONValue] = outcomes.map { if case .done(let output) = $0 { output ?? .null } else { .null } }
                    finishStep(state, step.id, .succeeded, output: .array(values))
                    last = state.steps[step.id]?.output
                    continue
                }
                return .pending
            default:
                if !state.launched.contains(step.id), (state.unconfirmed[step.id] ?? 0) == 0 { launch(step, record, state) }
                // A step that ended at once (a publish) is passed at the next advance, after its commit.
                return .pending
            }
        }
        return .done(last)
    }

    /// Every step id in `steps`, nested ones included.
    nonisolated package static func ids(_ steps: [WorkflowStep]) -> Set<String> {
        var result = Set<String>()
        for step in steps {
            result.insert(step.id)
            for list in step.children { result.formUnion(ids(list)) }
        }
        return result
    }

    // MARK: Records and commits

    /// Ends a step (its timers and waits go) and commits it.
    package func finishStep(_ state: LiveRun, _ stepID: String, _ status: WorkflowStepRecord.Status, output: JSONValue? = nil, error: String? = nil,
                    detail: JSONObject = [:]) {
        guard var record = state.steps[stepID], !record.status.isFinished else { return }
        record.status = status
        record.endedAt = Date().timeIntervalSince1970
        record.output = output
        record.error = error
        for (key, value) in detail { record.detail[key] = value }
        if let timer = state.timers.removeValue(forKey: stepID) { loop.cancel(timer) }
        state.launched.remove(stepID)
        state.prepared[stepID] = nil
        removeWait(run: state.run.id, step: stepID)
        state.heldEvents[stepID] = nil
        state.record(record)
        commit(state, [record])
    }

    /// Writes the run (when changed) and `records`; the run advances once everything handed
    /// over is committed.
    package func commit(_ state: LiveRun, _ records: [WorkflowStepRecord]) {
        var change = WorkflowCommit(steps: records, claim: state.run.claim)
        if state.runDirty {
            state.run.revision += 1
            change.runs = [state.run]
            if !state.stored { change.unstored = [state.run.id] }
            state.runDirty = false
        }
        guard !change.runs.isEmpty || !change.steps.isEmpty else { return }
        for record in records { state.unconfirmed[record.stepID, default: 0] += 1 }
        state.pendingCommits += 1
        let steps = records.map(\.stepID)
        guard let store else {
            loop.schedule(after: 0) { [weak self] in self?.committed(state, steps: steps, outcome: .written) }
            return
        }
        let owned = LoopOwned(state)
        let inbox = loop.inbox
        store.commit(change) { outcome in inbox.post { self.committed(owned.value, steps: steps, outcome: outcome) } }
    }

    /// Calls `done` once what was handed to the store for run `id` is committed (at once if nothing is pending).
    package func afterCommit(_ id: String, _ done: @escaping () -> Void) {
        afterCommit(id) { _ in done() }
    }

    /// Calls `done` once what was handed to the store for run `id` is committed, with whether
    /// all of it was kept: written, or held where a kill does not lose it (the store's run
    /// journal on a full disk). An answer that promises durability says so only then.
    package func afterCommit(_ id: String, kept done: @escaping (Bool) -> Void) {
        guard let state = live[id] ?? lastFinished[id], state.pendingCommits > 0 else { return done(true) }
        state.afterCommit.append(done)
    }

    private func committed(_ state: LiveRun, steps: [String], outcome: WorkflowCommitOutcome) {
        if outcome == .failed {
            state.unkept = true
            logger.error("workflow run \(state.run.id): the store could not write its step log now, nor keep it in its run journal; it goes on, and the store writes it once it can (status: store.retained) — a kill before then loses it")
        } else if outcome == .kept {
            logger.warning("workflow run \(state.run.id): the store could not write its step log now; it keeps it in its run journal and writes it once it can (status: store.retained)")
        }
        state.pendingCommits -= 1
        if outcome == .written { state.stored = true }
        if outcome == .refused {
            // Its lease lapsed and another agent resumes it: nothing more of it here.
            return letGo(state, reason: "its change was refused by the fleet's store")
        }
        for step in steps {
            let left = (state.unconfirmed[step] ?? 1) - 1
            state.unconfirmed[step] = left > 0 ? left : nil
        }
        guard state.pendingCommits == 0 else { return }
        let calls = state.afterCommit
        let kept = !state.unkept
        state.afterCommit = []
        state.unkept = false
        for call in calls { call(kept) }
        if live[state.run.id] === state {
            advance(state.run.id)
        } else if outcome == .written {
            lastFinished[state.run.id] = nil
        }
    }

    package func finishRun(_ state: LiveRun, status: WorkflowRun.Status, error: String?) {
        guard !state.run.status.isFinished else { return }
        state.run.status = status
        state.run.error = error
        state.run.endedAt = Date().timeIntervalSince1970
        state.runDirty = true
        for timer in state.timers.values { loop.cancel(timer) }
        state.timers = [:]
        for step in state.steps.keys { removeWait(run: state.run.id, step: step) }
        state.heldEvents = [:]
        commit(state, [])
        letGoOfInput(state)
        lastFinished[state.run.id] = state
        remember(state.run, state.log)
        var payload: JSONObject = ["run_id": .string(state.run.id), "workflow": .string(state.run.workflow), "status": .string(status.rawValue)]
        if let error { payload["error"] = .string(error) }
        if let event = RuntimeEvent.workflow(status) { publish(event, payload, state.run.cascade) }
        for done in state.waiters { done(state.run, state.log) }
        state.waiters = []
    }

    private func remember(_ run: WorkflowRun, _ steps: [WorkflowStepRecord]) {
        if recent[run.id] == nil {
            if Self.isLarge(run, steps) { rememberLarge(run.id) }
            recentOrder.append(run.id)
            if recentOrder.count > recentLimit {
                let gone = recentOrder.removeFirst()
                recent[gone] = nil
                if lastFinished[gone]?.pendingCommits == 0 { lastFinished[gone] = nil }
            }
        }
        recent[run.id] = (run, steps)
    }

    /// Finished runs with a large input or step output kept in memory, at most (the store has
    /// the others; without one they are gone, as runs past ``recentLimit`` are). 30 runs of a
    /// MiB's input through one step held 740 MB.
    nonisolated package static let recentLargeLimit = 8

    /// Whether a finished run holds an input, a step output or a step's details (a task step's
    /// input) of 16 KiB or more of JSON. Each is measured up to that much only.
    nonisolated static func isLarge(_ run: WorkflowRun, _ steps: [WorkflowStepRecord]) -> Bool {
        let limit = RunInput.textOnlyFrom
        return run.input.serializedLength(atMost: limit) == nil
            || steps.contains { step in
                step.output.map { $0.serializedLength(atMost: limit) == nil } == true
                    || (!step.detail.isEmpty && JSONValue.object(step.detail).serializedLength(atMost: limit) == nil)
            }
    }

    /// Counts a large run among the recent; past ``recentLargeLimit``, the oldest the store has
    /// confirmed written (``lastFinished``) is let go (`workflow show` then reads the store).
    private func rememberLarge(_ id: String) {
        recentLarge.append(id)
        while recentLarge.count > Self.recentLargeLimit,
              let index = recentLarge.firstIndex(where: { lastFinished[$0] == nil }) {
            recent[recentLarge.remove(at: index)] = nil
        }
    }
}

/// A problem a workflow command or step reports: a code, a message that says how to fix it.
package struct WorkflowError: Error, Equatable {
    package var code: String
    package var message: String

    package init(code: String, message: String) {
        self.code = code
        self.message = message
    }
}
