import AgentBase
import AgentLoop
import JSONSchema

/// A task step's large input costs the loop nothing it can wait for: its checks (its size, its
/// nesting, the task's input schema) and its text are made on ``RunInput/textMaking`` (a MiB
/// of values walked on the loop held it tens of ms per step), and its run holds the text alone.
extension WorkflowEngine {
    /// The most bytes of input (as JSON text) the unfinished runs of this agent may hold before
    /// a request for one more is refused and an event starts none: 64 MiB. A run holds its input
    /// as a value, several times its text (a MiB of small numbers: 3–13 MB), for its life; 20
    /// waiting runs of 1 MiB took the supervisor 67 MB further.
    nonisolated package static let defaultHeldInputLimit = 64 << 20

    /// Makes `state` live, its input counted.
    func hold(_ state: LiveRun, inputBytes: Int) {
        state.inputBytes = inputBytes
        heldInputBytes += inputBytes
        live[state.run.id] = state
    }

    /// Ends `state`'s life here: its input no longer counted.
    func letGoOfInput(_ state: LiveRun) {
        guard live[state.run.id] === state else { return }
        heldInputBytes -= state.inputBytes
        live[state.run.id] = nil
    }

    /// Whether a run whose input has `bytes` would take the unfinished runs' beyond ``heldInputLimit``.
    func lacksInputRoom(_ bytes: Int) -> Bool {
        bytes > 0 && heldInputBytes + pendingInputBytes + bytes > heldInputLimit
    }

    /// Why a request for a run of `workflow` whose input has `bytes` is refused for the inputs
    /// the unfinished runs hold already (HTTP 503 with `Retry-After`), or nil.
    func heldInputProblem(workflow: String, adding bytes: Int) -> CommandError? {
        guard lacksInputRoom(bytes) else { return nil }
        return .unavailable("the run of workflow \"\(workflow)\" was not started: the unfinished workflow runs of this agent hold \((heldInputBytes + pendingInputBytes) >> 20) MiB of input already, and their inputs may take at most \(heldInputLimit >> 20) MiB (as JSON text); "
                            + "try again once some have ended (`agent-control workflow runs`), or pass a file's path or a URL to the data instead of the data",
                            retryAfter: 5)
    }

    /// What the checks of a task step's input found, made off the loop.
    package struct CheckedInput: Sendable {
        /// The input as its references built it.
        package var input: JSONValue
        /// Why the step fails (nil: the input passes); `tooLarge`: it is not kept in the record
        /// (too large, or nested too deeply for the record to stay readable).
        package var failure: (message: String, tooLarge: Bool)?
        /// The input's compact JSON text, when it passes.
        package var text: [UInt8]?

        nonisolated package init(_ input: JSONValue, task: String, validator: JSONSchemaValidator?) {
            self.input = input
            failure = Self.failure(input, task: task, validator: validator)
            text = failure == nil ? input.serializedBytes() : nil
        }

        /// Why a step's task input built from its references fails, if it does.
        nonisolated package static func failure(_ input: JSONValue, task: String, validator: JSONSchemaValidator?) -> (message: String, tooLarge: Bool)? {
            if let problem = InputSize.problem(input) {
                return ("the input built for task \"\(task)\" is too large: \(problem.message)", true)
            }
            if let problem = InputNesting.problem(input) {
                return ("the input built for task \"\(task)\" is nested too deeply: \(problem.message)", true)
            }
            guard let problem = validator?.validate(input).first else { return nil }
            return ("the input built for task \"\(task)\" does not match its input schema at /input\(problem.instanceLocation): \(problem.message)", false)
        }
    }

    /// Checks a task step's large input off the loop; the step begins when that is back, if the
    /// run still wants it (not ended, its branch not cancelled, not gone back to an earlier step
    /// meanwhile).
    func checkAside(_ step: WorkflowStep, _ state: LiveRun, task: String, input: JSONValue) {
        guard state.checking[step.id] == nil else { return }
        state.lastCheck += 1
        let number = state.lastCheck
        state.checking[step.id] = number
        let generation = state.run.generation, validator = tasks.inputValidator(for: task), inbox = loop.inbox
        let checked = LoopOwned({ [weak self] (check: CheckedInput) in
            // Not checking any more: its branch was cancelled meanwhile (``cancelGoing``).
            guard let self, state.checking[step.id] == number else { return }
            state.checking[step.id] = nil
            guard !stopping, live[state.run.id] === state, !state.run.status.isFinished else { return }
            guard state.run.generation == generation, state.steps[step.id] == nil else { return advance(state.run.id) }
            begin(step, state, checked: check)
        })
        let submitted = RunInput.textMaking.submit {
            let check = CheckedInput(input, task: task, validator: validator)
            inbox.post { checked.value(check) }
        }
        if !submitted { checked.value(CheckedInput(input, task: task, validator: validator)) }
    }

    /// Submits `run` once its input's text is made on ``RunInput/textMaking`` (here, when the
    /// system refuses that pool its thread), if the step still waits for it.
    func submitWithText(_ run: TaskRun, _ step: WorkflowStep, _ state: LiveRun) {
        guard state.finding.insert(run.id).inserted else { return }
        let input = run.input, inbox = loop.inbox
        let made = LoopOwned({ [weak self] (text: [UInt8]) in
            guard let self else { return }
            state.finding.remove(run.id)
            guard !stopping, live[state.run.id] === state, let record = state.steps[step.id], !record.status.isFinished,
                  record.taskRun == run.id else { return }
            defer { rearmDeadline(step, state) }
            if tasks.knownRun(run.id) != nil { return tasks.whenFinished(run.id, watcher(step, state)) }
            var held = run
            held.inputText = InputText(text)
            state.prepared[step.id] = nil
            tasks.submit(held)
            tasks.whenFinished(run.id, watcher(step, state))
        })
        let submitted = RunInput.textMaking.submit {
            let text = input.serializedBytes()
            inbox.post { made.value(text) }
        }
        if !submitted { made.value(input.serializedBytes()) }
    }
}
