import AgentBase
import AgentLoop
import Foundation
import JSONSchema

extension WorkflowEngine {
    /// The workflow commands of every front (``CommandCatalog/workflows``), on the loop. Reads
    /// of the store are made on another thread; `inbox` brings their answer back to the loop.
    package func answer(_ request: JSONValue, caller: CommandCaller, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        let command = request["command"]?.stringValue ?? ""
        switch command {
        case "workflow_list": respond(listWorkflows())
        case "workflow_run": runWorkflow(request, caller: caller, respond: respond)
        case "workflow_runs": listRuns(request, inbox: inbox, respond: respond)
        case "workflow_show", "workflow_cancel", "workflow_approve", "workflow_reject":
            guard let id = request["id"]?.stringValue, !id.isEmpty else {
                return respond(TaskCoordinator.refusal("invalid", "expected \"id\": the workflow run's id (as `agent-control workflow runs` shows it); found \(request["id"].map(Describe.value) ?? "nothing")", pointer: "/id"))
            }
            if command == "workflow_cancel" {
                guard let run = cancel(id, by: caller.description) else {
                    return respond(TaskCoordinator.refusal(known(id) == nil ? "not_found" : "conflict", known(id) == nil ? "no unfinished workflow run \(id); `agent-control workflow runs` lists them" : "the run \(id) has already finished"))
                }
                return respond(["ok": true, "run": run.json])
            }
            if command == "workflow_approve" || command == "workflow_reject" {
                guard let step = request["step"]?.stringValue, !step.isEmpty else {
                    return respond(TaskCoordinator.refusal("invalid", "expected \"step\": the approval step's id", pointer: "/step"))
                }
                let comment = request["comment"]?.stringValue
                // The control socket is the local operator's; over HTTP the user must be an approver.
                let user = caller.front == "control" ? nil : (caller.user ?? "anonymous")
                switch decide(run: id, step: step, approve: command == "workflow_approve", user: user, comment: comment) {
                // Answered once the decision is committed: an acknowledged decision survives a crash.
                case .success(let record): return afterCommit(id) { respond(["ok": true, "step": record.json]) }
                case .failure(let problem): return respond(TaskCoordinator.refusal(problem.code, problem.message))
                }
            }
            findRun(id, inbox: inbox) { found in
                guard let found else { return respond(TaskCoordinator.refusal("not_found", "no workflow run \(id); `agent-control workflow runs` lists them")) }
                respond(["ok": true, "run": found.run.json, "steps": .array(found.steps.map(\.json))])
            }
        default:
            respond(TaskCoordinator.refusal("invalid", "unknown workflow command \"\(command)\""))
        }
    }

    private func listWorkflows() -> JSONValue {
        var counts: [String: (running: Int, waiting: Int)] = [:]
        for state in live.values {
            if state.run.status == .waiting { counts[state.run.workflow, default: (0, 0)].waiting += 1 } else { counts[state.run.workflow, default: (0, 0)].running += 1 }
        }
        let list = definitions.values.sorted { $0.name < $1.name }.map { workflow -> JSONValue in
            var object: JSONObject = [
                "name": .string(workflow.name), "description": .string(workflow.description), "version": .string(workflow.version),
                "steps": .array(workflow.steps.map { .string($0.id) }), "definition": workflow.source,
                "running": .number(JSONNumber(counts[workflow.name]?.running ?? 0)), "waiting": .number(JSONNumber(counts[workflow.name]?.waiting ?? 0)),
            ]
            if let schema = workflow.inputSchema { object["input"] = schema }
            if let trigger = workflow.onEvent { object["on_event"] = .string(trigger.type) }
            return .object(object)
        }
        return ["ok": true, "workflows": .array(list)]
    }

    private func runWorkflow(_ request: JSONValue, caller: CommandCaller, respond: @escaping (JSONValue) -> Void) {
        guard let name = request["name"]?.stringValue else {
            return respond(TaskCoordinator.refusal("invalid", "expected \"name\": the workflow's name (a string)", pointer: "/name"))
        }
        guard let workflow = definitions[name] else {
            let names = definitions.keys.sorted()
            return respond(TaskCoordinator.refusal("not_found", "no workflow named \"\(name)\"\(Suggestions.hint(for: name, in: names)); workflows: \(names.isEmpty ? "none (add them under \"workflows\" in the settings)" : names.joined(separator: ", "))"))
        }
        var wait = false
        if let value = request["wait"] {
            guard let flag = value.boolValue else {
                return respond(TaskCoordinator.refusal("invalid", "\"wait\" must be true or false; found \(Describe.value(value))", pointer: "/wait"))
            }
            wait = flag
        }
        let input = request["input"] ?? .object([:])
        if let problem = InputNesting.problem(input) { return respond(TaskCoordinator.refusal("invalid", problem.message, pointer: problem.pointer)) }
        let problems = inputProblems(input, workflow: name)
        guard problems.isEmpty else {
            let list = problems.map { "\($0.pointer): \($0.message)" }.joined(separator: "; ")
            return respond(["ok": false, "code": "invalid", "pointer": .string(problems[0].pointer),
                            "error": .string("the input does not match the input schema of workflow \"\(name)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)"),
                            "errors": .array(problems.map { ["pointer": .string($0.pointer), "message": .string($0.message)] })])
        }
        // Started and answered once the run is committed: a run the requester was told about is
        // never lost, and one the store cannot write is refused rather than run in memory only.
        let requestedBy = caller.front == "control" ? "cli" : "http"
        let answer = { [weak self] (run: WorkflowRun) in
            guard wait, let self else { return respond(["ok": true, "run": run.json]) }
            whenFinished(run.id) { run, steps in respond(["ok": true, "run": run.json, "steps": .array(steps.map(\.json))]) }
        }
        guard let store else {
            // In memory only: started at once.
            return answer(start(workflow, input: input, requestedBy: requestedBy))
        }
        let run = prepare(workflow, input: input, requestedBy: requestedBy)
        let this = LoopBound(value: self)
        let reply = LoopBound(value: respond)
        let then = LoopBound(value: answer)
        let inbox = loop.inbox
        store.commit(WorkflowCommit(runs: [run], claim: run.claim, keepIfUnwritten: false)) { outcome in
            inbox.post {
                guard outcome == .written else {
                    return reply.value(outcome == .refused ? TaskCoordinator.refusal("conflict", "the fleet's store refused the new workflow run (this agent's claim lapsed); try again")
                                                       : TaskCoordinator.storeRefusal("workflow run was not started"))
                }
                this.value.adopt([run])
                then.value(run)
            }
        }
    }

    private func findRun(_ id: String, inbox: LoopInbox, _ done: @escaping ((run: WorkflowRun, steps: [WorkflowStepRecord])?) -> Void) {
        if let found = known(id) { return done(found) }
        guard let store else { return done(nil) }
        let reply = LoopBound(value: done)
        Task {
            let found = try? await store.run(id: id)
            inbox.post { reply.value(found) }
        }
    }

    private func listRuns(_ request: JSONValue, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        var filter = WorkflowRunFilter()
        if let value = request["workflow"] {
            guard let name = value.stringValue else { return respond(TaskCoordinator.refusal("invalid", "\"workflow\" must be a workflow's name; found \(Describe.value(value))", pointer: "/workflow")) }
            filter.workflow = name
        }
        if let value = request["status"] {
            guard let status = value.stringValue.flatMap(WorkflowRun.Status.init(rawValue:)) else {
                return respond(TaskCoordinator.refusal("invalid", "\"status\" must be one of \(WorkflowRun.Status.allCases.map(\.rawValue).joined(separator: ", ")); found \(Describe.value(value))", pointer: "/status"))
            }
            filter.status = status
        }
        if let value = request["limit"] {
            guard let limit = value.numberValue?.intValue, limit >= 1 else {
                return respond(TaskCoordinator.refusal("invalid", "\"limit\" must be a whole number from 1 to 10000; found \(Describe.value(value))", pointer: "/limit"))
            }
            filter.limit = min(limit, 10_000)
        }
        let inMemory = Array(live.values.map(\.run)) + recent.values.map(\.run)
        guard let store else {
            let list = inMemory.filter(filter.matches).sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }.prefix(filter.limit)
            return respond(["ok": true, "runs": .array(list.map(\.json)), "stored": false])
        }
        let reply = LoopBound(value: respond)
        let this = LoopBound(value: self)
        let chosen = filter
        Task {
            let result = await Result { try await store.list(chosen) }
            inbox.post {
                let engine = this.value
                switch result {
                case .failure(let error):
                    reply.value(TaskCoordinator.refusal("unavailable", "cannot read the workflow runs from the store: \(error)"))
                case .success(let stored):
                    var merged: [String: WorkflowRun] = [:]
                    for run in stored { merged[run.id] = engine.known(run.id)?.run ?? run }
                    for run in Array(engine.live.values.map(\.run)) + engine.recent.values.map(\.run) { merged[run.id] = run }
                    let list = merged.values.filter(chosen.matches).sorted { ($0.startedAt, $0.id) > ($1.startedAt, $1.id) }.prefix(chosen.limit)
                    reply.value(["ok": true, "runs": .array(list.map(\.json)), "stored": true])
                }
            }
        }
    }
}
