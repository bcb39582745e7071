import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema

/// Each step kind: how it starts (its record, committed), how its effect is launched once the
/// start is committed (again after a restart), and how it ends.
extension WorkflowEngine {
    package func referenceValues(_ state: LiveRun) -> WorkflowReferences.Values {
        var values = WorkflowReferences.Values(input: state.run.input, outputs: state.outputs, variables: state.run.variables)
        let run = state.run.id
        if let read = memoryRead { values.memory = { key, own in read(key, own ? run : nil) } }
        return values
    }

    /// The step's record (its start), committed; instant steps (set, condition's choice) end here.
    /// `checked`: a task step's large input, checked off the loop (``checkAside(_:_:task:input:)``).
    package func begin(_ step: WorkflowStep, _ state: LiveRun, checked: CheckedInput? = nil) {
        let attempt = (state.attempts[step.id] ?? 0) + 1
        var record = WorkflowStepRecord(runID: state.run.id, stepID: step.id, kind: step.kindName, generation: state.run.generation,
                                        attempt: attempt, status: .running)
        let values = referenceValues(state)
        func fail(_ message: String) {
            record.status = .failed
            record.error = message
            record.endedAt = record.startedAt
        }
        switch step.kind {
        case .task(let name, let input, _, let timeout):
            switch checked.map({ .success($0.input) }) ?? WorkflowReferences.resolve(input, with: values) {
            case .failure(let problem): fail(problem.message)
            case .success(let resolved):
                record.detail["task"] = .string(name)
                record.detail["input"] = resolved
                if tasks.definitions[name] == nil {
                    fail("the task \"\(name)\" is no longer in the settings")
                } else if checked == nil, resolved.serializedLength(atMost: RunInput.textOnlyFrom - 1) == nil {
                    // Walked here, a MiB of values held the loop tens of ms: the step begins when it is back.
                    return checkAside(step, state, task: name, input: resolved)
                } else if let failure = checked.map({ $0.failure }) ?? CheckedInput.failure(resolved, task: name, validator: tasks.inputValidator(for: name)) {
                    // The references' values can make it too large (one output used many times).
                    if failure.tooLarge { record.detail["input"] = nil }
                    fail(failure.message)
                } else {
                    prepareTask(&record, state, name: name, input: resolved, text: checked?.text)
                    if let timeout { record.deadline = record.startedAt + timeout }
                }
            }
        case .set(let variables, let memory, let scope):
            switch (WorkflowReferences.resolve(.object(variables), with: values), WorkflowReferences.resolve(.object(memory), with: values)) {
            case (.failure(let problem), _), (_, .failure(let problem)): fail(problem.message)
            case (.success(let vars), .success(let keys)):
                if !(keys.objectValue ?? [:]).isEmpty, memoryWrite == nil {
                    fail("shared memory is not available in this agent yet; set \"vars\" only")
                    break
                }
                // A write the memory would refuse (a value over 256 KiB) fails the step here: the
                // step said "succeeded" and its later steps read the old value.
                if let refusal = Self.memoryRefusal(keys, run: scope == "run" ? state.run.id : nil) {
                    fail(refusal)
                    break
                }
                var variables = state.run.variables
                for (key, value) in vars.objectValue ?? [:] { variables[key] = value }
                // The run's record, variables included, is written again at each of its changes:
                // values that double at each `set` grew one to 126 MB.
                guard JSONValue.object(variables).serializedLength(atMost: InputSize.largest) != nil else {
                    fail("the run's variables would be more than \(InputSize.largest) bytes of JSON (1 MiB), the most a run keeps: set smaller values (a path or a URL to the data)")
                    break
                }
                state.run.variables = variables
                state.runDirty = true
                for (key, value) in keys.objectValue ?? [:] { memoryWrite?(key, value, scope == "run" ? state.run.id : nil) }
                record.status = .succeeded
                record.endedAt = record.startedAt
                var output: JSONObject = ["vars": vars]
                if !(keys.objectValue ?? [:]).isEmpty { output["memory"] = keys }
                record.output = .object(output)
            }
        case .condition(let when, _, _):
            guard let validator = try? JSONSchemaValidator(schema: when) else {
                fail("the condition's schema does not compile")
                break
            }
            switch ConditionOutcome(validator, on: .object(state.run.variables)) {
            case .passes: record.detail["branch"] = "then"
            case .fails: record.detail["branch"] = "else"
            // Neither branch is right for a condition that could not be decided: the step fails.
            case .undecided(let error): fail("the condition could not be decided: \(error.message)")
            }
        case .parallel:
            break
        case .publish(let type, let payload):
            switch WorkflowReferences.resolve(payload, with: values) {
            case .failure(let problem): fail(problem.message)
            case .success(let resolved) where resolved.serializedLength(atMost: payloadLimit) == nil:
                fail("the payload built for \(type) is more than \(payloadLimit) bytes of JSON, the most an event may have (/events/max_payload_bytes in the settings): publish a reference to the data (a path, a URL) instead")
            case .success(let resolved):
                record.detail["type"] = .string(type)
                record.detail["payload"] = resolved
            }
        case .waitEvent(let type, let condition, let timeout, _):
            record.status = .waiting
            record.detail["type"] = .string(type)
            if let timeout { record.deadline = record.startedAt + timeout }
            if let condition, let problem = resolveWhere(condition, into: &record, values) { fail(problem) }
        case .waitSignal(let name, let timeout, _):
            record.status = .waiting
            record.detail["signal"] = .string(name)
            if let timeout { record.deadline = record.startedAt + timeout }
        case .approval(let approvers, let prompt, let timeout, _):
            switch WorkflowReferences.resolve(.string(prompt), with: values) {
            case .failure(let problem): fail(problem.message)
            case .success(let resolved):
                record.status = .waiting
                record.detail["approvers"] = .array(approvers.map { .string($0) })
                record.detail["prompt"] = resolved
                if let timeout { record.deadline = record.startedAt + timeout }
            }
        case .chat(let text, let adapter, let conversation):
            switch (WorkflowReferences.resolve(.string(text), with: values), WorkflowReferences.resolve(.string(conversation ?? "workflow-\(state.run.id)"), with: values)) {
            case (.failure(let problem), _), (_, .failure(let problem)): fail(problem.message)
            case (.success(let resolved), .success(let name)):
                record.detail["text"] = resolved
                record.detail["conversation"] = name
                if let adapter { record.detail["adapter"] = .string(adapter) }
            }
        }
        state.record(record)
        if record.status == .waiting, case .waitEvent(let type, let condition, _, _) = step.kind {
            armWait(state, step.id, type: type, condition: record.detail["where"] ?? condition)
        }
        commit(state, [record])
        if case .approval = step.kind, record.status == .waiting {
            publish(.workflowApprovalRequested, ["run_id": .string(state.run.id), "workflow": .string(state.run.workflow), "step": .string(step.id),
                                                    "approvers": record.detail["approvers"] ?? [], "prompt": record.detail["prompt"] ?? ""], state.run.cascade)
        }
    }

    /// A `wait_event`'s `where` with its references resolved, once, as the step starts: kept
    /// in the record (`where`), so that a restart waits for the same values; nil, or why the
    /// step cannot wait (a reference with no value, a schema that no longer compiles).
    private func resolveWhere(_ condition: JSONValue, into record: inout WorkflowStepRecord, _ values: WorkflowReferences.Values) -> String? {
        guard !WorkflowReferences.isLiteral(condition) else { return nil }
        switch WorkflowReferences.resolve(condition, with: values) {
        case .failure(let problem):
            return "its \"where\" cannot be resolved: \(problem.message)"
        case .success(let resolved):
            if let problem = WorkflowSettings.compileProblem(resolved) {
                return "its \"where\", with its references resolved (\(String(resolved.serialized().prefix(200)))), is no JSON Schema: \(problem)"
            }
            record.detail["where"] = resolved
            return nil
        }
    }

    /// A task run with the step's idempotency key, its id kept in the record before it is submitted.
    private func prepareTask(_ record: inout WorkflowStepRecord, _ state: LiveRun, name: String, input: JSONValue, text: [UInt8]?) {
        var run = tasks.prepare(task: name, input: input, priority: .normal, requestedBy: .workflow, cascade: state.run.cascade)
        // Made off the loop: the run holds a large input as its text alone.
        if let text { run.inputText = InputText(text) }
        run.idempotencyKey = record.idempotencyKey
        record.taskRun = run.id
        state.prepared[record.stepID] = run
    }

    /// Starts a step's effect: its start is committed (now, or in an earlier life of the agent).
    package func launch(_ step: WorkflowStep, _ record: WorkflowStepRecord, _ state: LiveRun) {
        state.launched.insert(step.id)
        if let deadline = record.deadline { arm(state, step, at: deadline) }
        switch step.kind {
        case .task:
            if let retryAt = record.detail["retry_at"]?.numberValue?.doubleValue, retryAt > Date().timeIntervalSince1970 {
                let id = state.run.id
                state.timers[step.id + "#retry"] = loop.schedule(after: retryAt - Date().timeIntervalSince1970) { [weak self] in
                    guard let self, let state = live[id] else { return }
                    state.timers[step.id + "#retry"] = nil
                    submitTask(step, state)
                }
            } else {
                submitTask(step, state)
            }
        case .publish(let type, _):
            emit(type, record.detail["payload"] ?? .object([:]), state.run.workflow, state.run.cascade)
            finishStep(state, step.id, .succeeded, output: record.detail["payload"])
        case .waitEvent(let type, let condition, _, _):
            if let event = state.heldEvents.removeValue(forKey: step.id) {
                finishStep(state, step.id, .succeeded, output: event)
            } else if !waits.contains(run: state.run.id, step: step.id) {
                // Started in an earlier life of the agent: armed now, with the values resolved then
                // (a step started by a version that did not resolve them: resolved now).
                var resolved = record.detail["where"] ?? condition
                if record.detail["where"] == nil, let condition, case .success(let now) = WorkflowReferences.resolve(condition, with: referenceValues(state)) {
                    resolved = now
                }
                armWait(state, step.id, type: type, condition: resolved)
            }
        case .waitSignal(let name, _, _):
            takeKeptSignal(name, for: step.id, state)
        case .approval:
            break
        case .chat(_, let adapter, _):
            let id = state.run.id, attempt = record.attempt
            ask(record.detail["text"]?.stringValue ?? "", adapter, record.detail["conversation"]?.stringValue ?? "workflow-\(id)") { [weak self] answer in
                guard let self, let state = live[id], let current = state.steps[step.id], current.attempt == attempt else { return }
                switch answer {
                case .success(let text): finishStep(state, step.id, .succeeded, output: .string(text))
                case .failure(let problem): finishStep(state, step.id, .failed, error: problem.message)
                }
            }
        case .set, .condition, .parallel:
            break
        }
    }

    /// Hands the step's task run to the coordinator, or finds it again after a restart: known
    /// to the coordinator (recovered), finished in the store, or not committed at all (then
    /// submitted again under the same id and key).
    private func submitTask(_ step: WorkflowStep, _ state: LiveRun) {
        guard let record = state.steps[step.id], !record.status.isFinished, let runID = record.taskRun else { return }
        if tasks.knownRun(runID) != nil { return tasks.whenFinished(runID, watcher(step, state)) }
        // A run prepared in this life was never submitted, so no store has it: only a step found
        // again after a restart (or taken over in a fleet) reads the store, off the loop (a
        // fleet's read is a round trip to the database; SQLite's waits behind list reads).
        guard state.prepared[step.id] == nil, let store = tasks.store else { return submit(step, state, runID) }
        guard state.finding.insert(runID).inserted else { return }
        let inbox = loop.inbox, asker = LoopOwned(state)
        Task.detached { [weak self] in
            let stored = await Result { try await store.run(id: runID) }
            inbox.post { self?.found(stored, step, asker.value, taskRun: runID) }
        }
    }

    /// A step's task run read from the store (nil: none there) after a restart, if the step
    /// still waits for it and its run is still this agent's (a fleet's run handed off and taken
    /// again is a new state, which reads for itself).
    private func found(_ read: Result<TaskRun?, any Error>, _ step: WorkflowStep, _ state: LiveRun, taskRun runID: String) {
        state.finding.remove(runID)
        guard !stopping, live[state.run.id] === state, let record = state.steps[step.id], !record.status.isFinished,
              record.taskRun == runID, state.prepared[step.id] == nil else { return }
        let stored: TaskRun?
        switch read {
        case .success(let run): stored = run
        case .failure(let error):
            // Not "none there": submitted again, a fleet's queued run could be queued twice.
            logger.warning("workflow run \(state.run.id): cannot read task run \(runID) of step \(step.id) from the store (\(error)); trying again in 1 s")
            let id = state.run.id
            state.timers[step.id + "#find"] = loop.schedule(after: 1) { [weak self] in
                guard let self, let state = live[id] else { return }
                state.timers[step.id + "#find"] = nil
                submitTask(step, state)
            }
            return
        }
        let watch = watcher(step, state)
        defer { rearmDeadline(step, state) }
        if tasks.knownRun(runID) != nil { return tasks.whenFinished(runID, watch) }
        if let stored {
            if stored.status.isFinished { return watch(stored) }
            // A fleet's run is in the shared queue (the step was taken over from another agent):
            // whoever claims it carries it out, a dead holder's attempt rescued after its lease.
            // Submitted again, it would be queued afresh and could run twice at once.
            if tasks.shared != nil { return tasks.whenFinished(runID, watch) }
        }
        submit(step, state, runID)
    }

    /// A deadline that passed while the step's run was being read cancelled nothing (the
    /// coordinator did not know the run yet): armed again, it cancels the run now.
    func rearmDeadline(_ step: WorkflowStep, _ state: LiveRun) {
        guard let record = state.steps[step.id], !record.status.isFinished, let deadline = record.deadline,
              state.timers[step.id] == nil else { return }
        arm(state, step, at: deadline)
    }

    /// What is told when the step's task run ends.
    func watcher(_ step: WorkflowStep, _ state: LiveRun) -> (TaskRun) -> Void {
        let id = state.run.id
        return { [weak self] run in self?.taskEnded(run, run: id, step: step) }
    }

    /// Submits the step's task run: the one prepared in this life, or one made again with the
    /// recorded id and key.
    private func submit(_ step: WorkflowStep, _ state: LiveRun, _ runID: String) {
        guard let record = state.steps[step.id], case .task(let name, _, _, _) = step.kind else { return }
        var run = state.prepared[step.id] ?? {
            var again = tasks.prepare(task: name, input: record.detail["input"] ?? .object([:]), priority: .normal, requestedBy: .workflow, cascade: state.run.cascade)
            again.id = runID
            return again
        }()
        run.idempotencyKey = record.idempotencyKey
        // A large input's text is made off the loop (a MiB of values: tens of ms); the run is
        // then held as its text alone and counted among the unfinished runs' inputs.
        if run.held.text == nil, run.input.serializedLength(atMost: RunInput.textOnlyFrom - 1) == nil {
            return submitWithText(run, step, state)
        }
        state.prepared[step.id] = nil
        tasks.submit(run)
        tasks.whenFinished(runID, watcher(step, state))
    }

    private func taskEnded(_ run: TaskRun, run id: String, step: WorkflowStep) {
        // At the agent's stop the coordinator answers with runs interrupted, not finished.
        guard !stopping, run.status.isFinished, let state = live[id], var record = state.steps[step.id], record.taskRun == run.id,
              !record.status.isFinished, case .task(let name, _, let retries, _) = step.kind else { return }
        // Which executor and agent ran the step's task (its last attempt).
        record.detail["executor"] = run.executor.map(JSONValue.string)
        record.detail["agent"] = (run.attemptRecord?.agent ?? run.agent).map(JSONValue.string)
        state.record(record)
        if run.status == .succeeded {
            return finishStep(state, step.id, .succeeded, output: run.output ?? .null)
        }
        if run.status == .failed, run.error?.hasPrefix("interrupted:") == true, let input = record.detail["input"] {
            // The agent died while the task ran, more often than the task's own retries allow:
            // the step is in flight, and runs again with the same key (a new task run).
            var next = tasks.prepare(task: name, input: input, priority: .normal, requestedBy: .workflow, cascade: state.run.cascade)
            next.idempotencyKey = record.idempotencyKey
            record.taskRun = next.id
            state.prepared[step.id] = next
            state.launched.remove(step.id)
            state.record(record)
            commit(state, [record])
            return
        }
        let timedOut = record.deadline.map { Date().timeIntervalSince1970 >= $0 - 0.001 } ?? false
        let reason = timedOut ? "the step's timeout passed; its task run \(run.id) was cancelled" : "task run \(run.id) \(run.status.rawValue): \(run.error ?? "no reason given")"
        // Runs this record has had: a step retry is the next attempt, with its own key.
        let tries = record.detail["tries"]?.numberValue?.intValue ?? 1
        if let retries, run.status != .cancelled || timedOut, tries <= retries.max {
            let retry = tries
            record.detail["tries"] = .number(JSONNumber(tries + 1))
            if let timer = state.timers.removeValue(forKey: step.id) { loop.cancel(timer) }
            record.attempt += 1
            record.error = reason
            record.detail["retry_at"] = .number(JSONNumber(Date().timeIntervalSince1970 + TaskCoordinator.retryDelay(retries, retry: retry)))
            if let input = record.detail["input"] {
                var next = tasks.prepare(task: name, input: input, priority: .normal, requestedBy: .workflow, cascade: state.run.cascade)
                next.idempotencyKey = record.idempotencyKey
                record.taskRun = next.id
                state.prepared[step.id] = next
            }
            if let timeout = (step.kind.taskTimeout) { record.deadline = (record.detail["retry_at"]?.numberValue?.doubleValue ?? 0) + timeout }
            state.launched.remove(step.id)
            state.record(record)
            commit(state, [record])
            return
        }
        finishStep(state, step.id, timedOut ? .timedOut : .failed, output: run.output, error: reason)
    }

    /// The step's deadline: a wait or an approval times out (fail, continue or goto); a task
    /// step's run is cancelled.
    private func arm(_ state: LiveRun, _ step: WorkflowStep, at deadline: Double) {
        if let old = state.timers[step.id] { loop.cancel(old) }
        let id = state.run.id
        state.timers[step.id] = loop.schedule(after: max(deadline - Date().timeIntervalSince1970, 0)) { [weak self] in
            guard let self, let state = live[id] else { return }
            state.timers[step.id] = nil
            deadlinePassed(state, step)
        }
    }

    private func deadlinePassed(_ state: LiveRun, _ step: WorkflowStep) {
        guard let record = state.steps[step.id], !record.status.isFinished else { return }
        switch step.kind {
        case .task:
            if let run = record.taskRun { _ = tasks.cancel(run, why: "its step \(step.id) of workflow run \(state.run.id) passed its deadline") }
        case .waitEvent(_, _, let timeout, let onTimeout), .waitSignal(_, let timeout, let onTimeout), .approval(_, _, let timeout, let onTimeout):
            let awaited = switch step.kind {
            case .approval: "decision"
            case .waitSignal(let name, _, _): "signal \"\(name)\""
            default: "matching event"
            }
            let message = "no \(awaited) within \(ProcessPolicy.format(timeout ?? 0)) s"
            switch onTimeout {
            case .fail: finishStep(state, step.id, .timedOut, error: message)
            case .continue: finishStep(state, step.id, .succeeded, output: .null, error: message, detail: ["timed_out": true])
            case .goto(let target):
                finishStep(state, step.id, .timedOut, error: message + "; going on at \(target)")
                jump(state, to: target)
            }
        default:
            break
        }
    }

    /// A goto: what is going is cancelled, and a new generation starts at `target`.
    package func jump(_ state: LiveRun, to target: String) {
        guard let index = state.definition.steps.firstIndex(where: { $0.id == target }) else { return }
        cancelGoing(in: state, steps: Set(state.steps.keys).union(state.checking.keys), reason: "the run went on at \(target)")
        state.run.generation += 1
        state.run.resumeAt = index
        state.runDirty = true
        state.steps = [:]
        state.launched = []
        commit(state, [])
    }

    /// Cancels the going steps among `steps`: task runs are cancelled, waits end.
    package func cancelGoing(in state: LiveRun, steps: Set<String>, reason: String) {
        for id in steps.sorted() {
            // Its large input being checked, it has not begun: it never will.
            if state.checking.removeValue(forKey: id) != nil { continue }
            guard let record = state.steps[id], !record.status.isFinished else { continue }
            if let run = record.taskRun, record.kind == "task" { _ = tasks.cancel(run, why: "its step \(id) of workflow run \(state.run.id) was cancelled: \(reason)") }
            finishStep(state, id, .cancelled, error: reason)
        }
    }

    // MARK: Approvals

    /// Approves or rejects a waiting approval. `user`: who (nil on the control socket: the
    /// operator, who may answer any approval).
    package func decide(run id: String, step stepID: String, approve: Bool, user: String?, comment: String?) -> Result<WorkflowStepRecord, WorkflowError> {
        guard let state = live[id] else {
            // A finished run is a conflict (409), as a finished task run's cancel is: a code
            // the API documents (it answered "finished", which no schema of the API has).
            return .failure(WorkflowError(code: known(id) == nil ? "not_found" : "conflict", message: known(id) == nil ? "no workflow run \(id) (see `agent-control workflow runs`)" : "the run \(id) has finished; no approval of it waits for a decision"))
        }
        guard let record = state.steps[stepID], record.kind == "approval" else {
            return .failure(WorkflowError(code: "not_found", message: "the run \(id) has no approval step \"\(stepID)\" waiting (see `agent-control workflow show \(id)`)"))
        }
        guard record.status == .waiting else {
            return .failure(WorkflowError(code: "conflict", message: "the approval \(stepID) of run \(id) is \(record.status.rawValue), not waiting"))
        }
        let approvers = record.detail["approvers"]?.arrayValue?.compactMap(\.stringValue) ?? []
        if let user {
            // The settings as they are now: a reload that removed the user or changed the role counts.
            guard let role = roles[user] else {
                return .failure(WorkflowError(code: "forbidden", message: "\(user) is not a user or named token of the settings' \"http\" (any more); approvers: \(approvers.joined(separator: ", "))"))
            }
            guard approvers.contains(user) || approvers.contains(role) else {
                return .failure(WorkflowError(code: "forbidden", message: "\(user) may not answer this approval; approvers: \(approvers.joined(separator: ", "))"))
            }
        }
        var decision: JSONObject = ["decision": .string(approve ? "approved" : "rejected"), "by": .string(user ?? "operator (control socket)"),
                                    "at": .string(TaskRun.iso(Date().timeIntervalSince1970))]
        if let comment, !comment.isEmpty { decision["comment"] = .string(comment) }
        if approve {
            finishStep(state, stepID, .succeeded, output: .object(decision), detail: ["decision": .object(decision)])
        } else {
            finishStep(state, stepID, .failed, output: .object(decision),
                       error: "rejected by \(user ?? "the operator")\(comment.map { ": \($0)" } ?? "")", detail: ["decision": .object(decision)])
        }
        return .success(state.steps[stepID] ?? record)
    }

    /// Why a `set` step's memory keys cannot be written (the first refused, by key), or nil.
    nonisolated static func memoryRefusal(_ keys: JSONValue, run: String?) -> String? {
        for (key, value) in (keys.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            do {
                try MemoryLimits.check(MemoryWrite(scope: run.map { .workflowRun($0) } ?? .agent, key: key, operation: .put(value)))
            } catch {
                return "memory key \"\(key)\" cannot be written: \(error.message)"
            }
        }
        return nil
    }
}

extension WorkflowStep.Kind {
    package var taskTimeout: Double? {
        if case .task(_, _, _, let timeout) = self { return timeout }
        return nil
    }
}
