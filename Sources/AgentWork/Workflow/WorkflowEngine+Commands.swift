import AgentBase
import AgentLoop
import Foundation
import JSONSchema

/// The workflow run commands (``WorkflowCommands``), on the loop: the registry has checked and
/// decoded the request; what it cannot check (the workflow exists, the input matches its
/// schema, the run is known) is checked here. Reads of the store are made on another thread;
/// the loop's inbox brings their answer back.
extension WorkflowEngine {
    /// `workflow_list`: each workflow as the settings define it, with its runs going and waiting.
    package func workflowList() -> [JSONValue] {
        var counts: [String: (running: Int, waiting: Int)] = [:]
        for state in live.values {
            if state.run.status == .waiting { counts[state.run.workflow, default: (0, 0)].waiting += 1 } else { counts[state.run.workflow, default: (0, 0)].running += 1 }
        }
        return definitions.values.sorted { $0.name < $1.name }.map { workflow -> JSONValue in
            var object: JSONObject = [
                "name": .string(workflow.name), "description": .string(workflow.description), "version": .string(workflow.version),
                "steps": .array(workflow.steps.map { .string($0.id) }), "definition": workflow.source,
                "running": .number(JSONNumber(counts[workflow.name]?.running ?? 0)), "waiting": .number(JSONNumber(counts[workflow.name]?.waiting ?? 0)),
            ]
            if let schema = workflow.inputSchema { object["input"] = schema }
            if let trigger = workflow.onEvent { object["on_event"] = .string(trigger.type) }
            return .object(object)
        }
    }

    /// `workflow_run`: started and answered once the run is committed — a run the requester
    /// was told about is never lost, and one the store cannot write is refused rather than run
    /// in memory only.
    package func runWorkflow(_ request: WorkflowRunCommand.Request, requestedBy: String,
                             respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        let name = request.name
        guard let workflow = definitions[name] else {
            let names = definitions.keys.sorted()
            return respond(.failure(.notFound("no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none (add them under \"workflows\" in the settings)" : names.joined(separator: ", "))")))
        }
        let input = request.input ?? .object([:])
        if let problem = request.nestingProblem { return respond(.failure(.invalid(problem.message, pointer: problem.pointer))) }
        let problems = inputProblems(input, workflow: name, nestingChecked: true)
        guard problems.isEmpty else {
            let list = problems.map { "\($0.pointer): \($0.message)" }.joined(separator: "; ")
            return respond(.failure(CommandError(.invalid, "the input does not match the input schema of workflow \"\(name)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)",
                                                 pointer: problems[0].pointer,
                                                 errors: problems.map { ["pointer": .string($0.pointer), "message": .string($0.message)] })))
        }
        if let problem = heldInputProblem(workflow: name, adding: request.inputBytes) { return respond(.failure(problem)) }
        let wait = request.wait ?? false
        let answer = { [weak self] (run: WorkflowRun) in
            guard wait, let self else { return respond(.success(WorkflowShowAnswer(run))) }
            whenFinished(run.id) { run, steps in respond(.success(WorkflowShowAnswer(run, steps: steps))) }
        }
        guard let store else {
            // In memory only: started at once.
            return answer(start(workflow, input: input, requestedBy: requestedBy, inputBytes: request.inputBytes))
        }
        if awaitsFleet { return respond(.failure(FleetNotJoined.error("the workflow run was not started"))) }
        let run = prepare(workflow, input: input, requestedBy: requestedBy)
        let reply = LoopOwned(respond)
        let then = LoopOwned(answer)
        let inbox = loop.inbox
        // Counted while it waits for its commit, so that requests waiting together cannot pass the bound.
        let bytes = request.inputBytes
        pendingInputBytes += bytes
        store.commit(WorkflowCommit(runs: [run], claim: run.claim, keepIfUnwritten: false)) { outcome in
            inbox.post {
                self.pendingInputBytes -= bytes
                guard outcome == .written else {
                    return reply.value(.failure(outcome == .refused ? .conflict("the fleet's store refused the new workflow run (this agent's claim lapsed); try again")
                                                                   : TaskCoordinator.storeError("workflow run was not started")))
                }
                self.adopt([run], inputBytes: bytes)
                then.value(run)
            }
        }
    }

    /// `workflow_show`: from memory while the store may lack the run's last state, else (off
    /// the loop) from the store.
    package func showRun(_ id: String, respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        if let found = unwritten(id) { return respond(.success(WorkflowShowAnswer(found.run, steps: found.steps))) }
        guard let store else { return respond(.failure(Self.noRun(id))) }
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let found = try? await store.run(id: id)
            let answer = WorkflowEngine.shown(found?.run, steps: found?.steps ?? [], id: id)
            inbox.post { reply.value(answer) }
        }
    }

    /// `workflow_show`'s answer for a run read from the store (nil: it has none).
    nonisolated private static func shown(_ run: WorkflowRun?, steps: [WorkflowStepRecord], id: String) -> Result<WorkflowShowAnswer, CommandError> {
        guard let run else { return .failure(noRun(id)) }
        return .success(WorkflowShowAnswer(run, steps: steps))
    }

    nonisolated private static func noRun(_ id: String) -> CommandError {
        .notFound("no workflow run \(id); `agent-control workflow runs` lists them")
    }

    /// `workflow_cancel`: an unfinished run. Answered once the cancel is committed; refused, as a signal is, while the store could not
    /// keep it (see ``WorkflowStore/keepsChangesNow``).
    package func cancelRun(_ id: String, by caller: CommandCaller, respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        if live[id] != nil, store?.keepsChangesNow == false { return respond(.failure(TaskCoordinator.storeError("cancel was not done"))) }
        guard let run = cancel(id, by: caller.description) else {
            return refuseNotUnfinished(id, finished: .conflict("the run \(id) has already finished"),
                                       missing: .notFound("no unfinished workflow run \(id); `agent-control workflow runs` lists them"), respond: respond)
        }
        afterCommit(id) { kept in
            guard kept else {
                return respond(.failure(TaskCoordinator.notKept("the run \(id) was cancelled", undone: "the run resumes at the next start")))
            }
            respond(.success(WorkflowShowAnswer(run)))
        }
    }

    /// The refusal of a change to run `id`, which is not unfinished here: `finished` while the
    /// run is kept finished (memory while the store may lack it, else the store, off the loop),
    /// else `missing` — a run the retention deleted is not found.
    func refuseNotUnfinished<T: Sendable>(_ id: String, finished: CommandError, missing: CommandError,
                                          respond: @escaping (Result<T, CommandError>) -> Void) {
        if unwritten(id) != nil { return respond(.failure(finished)) }
        guard let store else { return respond(.failure(known(id) == nil ? missing : finished)) }
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let kept = (try? await store.run(id: id))?.run.status.isFinished == true
            inbox.post { reply.value(.failure(kept ? finished : missing)) }
        }
    }

    /// `workflow_approve`, `workflow_reject`: answered once the decision is committed, so that
    /// an acknowledged decision survives a crash. The control socket is the local operator's;
    /// over HTTP the user must be one of the step's approvers.
    package func decide(_ request: WorkflowDecision, approve: Bool, caller: CommandCaller,
                        respond: @escaping (Result<WorkflowStepAnswer, CommandError>) -> Void) {
        let user = caller.front == "control" ? nil : (caller.user ?? "anonymous")
        if store?.keepsChangesNow == false { return respond(.failure(TaskCoordinator.storeError("decision was not taken"))) }
        switch decide(run: request.id, step: request.step, approve: approve, user: user, comment: request.comment) {
        case .success(let record):
            afterCommit(request.id) { kept in
                guard kept else {
                    return respond(.failure(TaskCoordinator.notKept("the run \(request.id) took the decision on \(request.step)", undone: "the step waits for a decision again")))
                }
                respond(.success(WorkflowStepAnswer(step: record.json)))
            }
        case .failure(let problem):
            let refusal = CommandError(CommandError.Code(rawValue: problem.code) ?? .failed, problem.message)
            guard live[request.id] == nil else { return respond(.failure(refusal)) }
            // Not unfinished here: finished and kept, or gone (the retention deletes runs).
            refuseNotUnfinished(request.id, finished: refusal.code == .conflict ? refusal : .conflict("the run \(request.id) has finished; no approval of it waits for a decision"),
                                missing: .notFound("no workflow run \(request.id) (see `agent-control workflow runs`)"), respond: respond)
        }
    }

    /// `workflow_runs`: from the store merged with memory, newest first, each as a list shows
    /// it (``RunListing``). Off the loop: the loop hands over the runs it holds.
    package func listRuns(_ filter: WorkflowRunFilter, respond: @escaping (Result<WorkflowRunsCommand.Answer, CommandError>) -> Void) {
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        let (store, known) = (store, store == nil ? inMemoryRuns : unwrittenRuns)
        Task.detached {
            let answer: Result<WorkflowRunsCommand.Answer, CommandError>
            if let store {
                switch await Result(awaiting: { try await store.list(filter) }) {
                case .failure(let error): answer = .failure(.unavailable("cannot read the workflow runs from the store: \(error)"))
                case .success(let stored): answer = .success(WorkflowRunsCommand.Answer(runs: Self.merged(stored.runs, known: known, filter: filter),
                                                                                      stored: true, cut: stored.cut))
                }
            } else {
                answer = .success(WorkflowRunsCommand.Answer(runs: Self.merged([], known: known, filter: filter), stored: false))
            }
            inbox.post { reply.value(answer) }
        }
    }

    /// A list with what the store has: memory is newer than the store (its writer batches),
    /// so it wins, and adds runs not written yet.
    nonisolated private static func merged(_ stored: [ListedRun<WorkflowRun>], known: [WorkflowRun], filter: WorkflowRunFilter) -> [JSONValue] {
        var merged: [String: ListedRun<WorkflowRun>] = [:]
        for listed in stored { merged[listed.run.id] = listed }
        for run in known { merged[run.id] = ListedRun(run) }
        return merged.values.filter { filter.matches($0.run) }
            .sorted { ($0.run.startedAt, $0.run.id) > ($1.run.startedAt, $1.run.id) }
            .prefix(max(filter.limit, 0))
            .map { RunListing.shown($0.run.json, omitted: $0.omitted) }
    }

    /// The runs in memory: unfinished and recently finished.
    private var inMemoryRuns: [WorkflowRun] { Array(live.values.map(\.run)) + recent.values.map(\.run) }

    /// The runs the store may lack or hold an older state of: unfinished, and finished but not
    /// confirmed written. A finished run the store confirmed is listed from the store alone, so
    /// that one the retention deleted is not listed from memory.
    private var unwrittenRuns: [WorkflowRun] { Array(live.values.map(\.run)) + lastFinished.values.map(\.run) }
}
