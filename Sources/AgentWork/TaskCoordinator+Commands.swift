import AgentBase
import AgentLoop
import Foundation
import JSONSchema

extension TaskCoordinator {
    /// The task commands of every front (``CommandCatalog/tasks``), on the loop. Reads of the
    /// store are made on another thread; `inbox` brings their answer back to the loop.
    package func answer(_ request: JSONValue, origin: TaskRun.Origin, inbox: LoopInbox, caller: CommandCaller? = nil,
                respond: @escaping (JSONValue) -> Void) {
        if let answer = answerAssignment(request, caller: caller) { return respond(answer) }
        switch request["command"]?.stringValue {
        case "task_list"?: respond(listTasks())
        case "task_run"?: runTask(request, origin: origin, respond: respond)
        case "task_runs"?: listRuns(request, inbox: inbox, respond: respond)
        case "task_show"?, "task_rerun"?, "task_cancel"?:
            guard let id = request["id"]?.stringValue, !id.isEmpty else {
                return respond(Self.refusal("invalid", "expected \"id\": the run's id (a string, as `agent-control task runs` shows it); found \(request["id"].map(Describe.value) ?? "nothing")", pointer: "/id"))
            }
            findRun(id, inbox: inbox) { [weak self] run in
                guard let self else { return respond(CommandAnswer.stopping) }
                guard let run else { return respond(Self.refusal("not_found", "no run with id \"\(id)\"; `agent-control task runs` lists them")) }
                switch request["command"]?.stringValue {
                case "task_rerun"?:
                    guard definitions[run.task] != nil else {
                        return respond(Self.refusal("not_found", "the task \"\(run.task)\" of run \(id) is no longer in the settings"))
                    }
                    var prepared = prepare(task: run.task, input: run.input, priority: run.priority, requestedBy: .rerun)
                    prepared.rerunOf = id
                    submitDurably(prepared, respond: respond) { respond(["ok": true, "run": $0.json]) }
                case "task_cancel"?:
                    guard !run.status.isFinished, runs[id] != nil else {
                        return respond(Self.refusal("conflict", "run \(id) has already finished (\(run.status.rawValue)); nothing to cancel"))
                    }
                    let wasRunning = active[id] != nil
                    let current = cancel(id)
                    if wasRunning {
                        whenFinished(id) { respond(["ok": true, "run": $0.json]) }
                    } else {
                        respond(["ok": true, "run": (current ?? run).json])
                    }
                default:
                    respond(["ok": true, "run": run.json])
                }
            }
        case let other:
            respond(Self.refusal("invalid", "unknown task command \"\(other ?? "")\""))
        }
    }

    package static func refusal(_ code: String, _ message: String, pointer: String? = nil) -> JSONValue {
        var object: JSONObject = ["ok": false, "code": .string(code), "error": .string(message)]
        if let pointer { object["pointer"] = .string(pointer) }
        return .object(object)
    }

    private func listTasks() -> JSONValue {
        let counts = Dictionary(figures.map { ($0.task, $0) }, uniquingKeysWith: { first, _ in first })
        let tasks = definitions.values.sorted { $0.name < $1.name }.map { task -> JSONValue in
            var object: JSONObject = [
                "name": .string(task.name), "type": .string(task.type), "description": .string(task.description),
                "max_concurrent": .number(JSONNumber(task.maxConcurrent)), "max_interruptions": .number(JSONNumber(task.maxInterruptions)),
                "retries": ["max": .number(JSONNumber(task.retries.max)), "initial_delay": .number(JSONNumber(task.retries.initialDelay)),
                            "multiplier": .number(JSONNumber(task.retries.multiplier)), "max_delay": .number(JSONNumber(task.retries.maxDelay))],
                "queued": .number(JSONNumber(counts[task.name]?.queued ?? 0)), "running": .number(JSONNumber(counts[task.name]?.running ?? 0)),
            ]
            if let timeout = task.timeout { object["timeout"] = .number(JSONNumber(timeout)) }
            // The command as written; its environment's values may be secrets and are not shown.
            if let command = task.command {
                object["command"] = .array(command.arguments.map(JSONValue.string))
                if command.shell { object["shell"] = true }
            }
            if let trigger = task.onEvent { object["on_event"] = .string(trigger.type) }
            if let schema = task.inputSchema { object["input"] = schema }
            return .object(object)
        }
        return ["ok": true, "tasks": .array(tasks)]
    }

    private func runTask(_ request: JSONValue, origin: TaskRun.Origin, respond: @escaping (JSONValue) -> Void) {
        guard let name = request["name"]?.stringValue else {
            return respond(Self.refusal("invalid", "expected \"name\": the task's name (a string)", pointer: "/name"))
        }
        guard definitions[name] != nil else {
            let names = definitions.keys.sorted()
            return respond(Self.refusal("not_found", "no task named \"\(name)\"\(Suggestions.hint(for: name, in: names)); tasks: \(names.isEmpty ? "none (add them under \"tasks\" in the settings)" : names.joined(separator: ", "))"))
        }
        var priority = TaskRun.Priority.normal
        if let value = request["priority"] {
            guard let parsed = value.stringValue.flatMap(TaskRun.Priority.init(rawValue:)) else {
                return respond(Self.refusal("invalid", "\"priority\" must be low, normal, high or critical; found \(Describe.value(value))", pointer: "/priority"))
            }
            priority = parsed
        }
        var notBefore: Double?
        if let value = request["at"] {
            guard let text = value.stringValue, let time = Self.parseTime(text) else {
                return respond(Self.refusal("invalid", "\"at\" must be an ISO 8601 time (e.g. 2026-11-24T07:00:00Z) or a delay from now (30s, 10m, 2h, 1d); found \(Describe.value(value))", pointer: "/at"))
            }
            notBefore = time
        }
        var wait = false
        if let value = request["wait"] {
            guard let flag = value.boolValue else {
                return respond(Self.refusal("invalid", "\"wait\" must be true or false; found \(Describe.value(value))", pointer: "/wait"))
            }
            wait = flag
        }
        var require: [String: String] = [:]
        if let value = request["require"] {
            guard let object = value.objectValue, object.values.allSatisfy({ $0.stringValue != nil }) else {
                return respond(Self.refusal("invalid", "\"require\" must be an object of labels (strings), e.g. {\"gpu\": \"yes\"}; found \(Describe.value(value))", pointer: "/require"))
            }
            require = ExecutorSettings.labels(value)
            // In a fleet another agent's executors may carry them: the run waits for one.
            if shared == nil, let problem = requirementProblem(task: name, require) { return respond(Self.refusal("invalid", problem, pointer: "/require")) }
        }
        let input = request["input"] ?? .object([:])
        if let problem = InputNesting.problem(input) { return respond(Self.refusal("invalid", problem.message, pointer: problem.pointer)) }
        let problems = inputProblems(input, task: name)
        guard problems.isEmpty else {
            let list = problems.map { "\($0.pointer): \($0.message)" }.joined(separator: "; ")
            return respond(["ok": false, "code": "invalid", "pointer": .string(problems[0].pointer),
                            "error": .string("the input does not match the input schema of task \"\(name)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)"),
                            "errors": .array(problems.map { ["pointer": .string($0.pointer), "message": .string($0.message)] })])
        }
        var prepared = prepare(task: name, input: input, priority: priority, notBefore: notBefore, requestedBy: origin)
        prepared.require = require
        submitDurably(prepared, respond: respond) { [weak self] run in
            guard wait, let self else { return respond(["ok": true, "run": run.json]) }
            whenFinished(run.id) { respond(["ok": true, "run": $0.json]) }
        }
    }

    /// Queues a run a request asked for once the store has it, then calls `queued` with it:
    /// an answered run is never lost. While the store cannot write, the request is refused
    /// (``storeRefusal(_:)``) and nothing is queued. No store, or a fleet's: queued at once.
    private func submitDurably(_ prepared: TaskRun, respond: @escaping (JSONValue) -> Void, queued: @escaping (TaskRun) -> Void) {
        guard let store, shared == nil else { return queued(submit(prepared)) }
        // Three boxes, not one of a tuple: destructuring a tuple of a class and closures from a
        // box released the coordinator once too often on the refusing path (Swift 6.3).
        let this = LoopBound(value: self)
        let reply = LoopBound(value: respond)
        let then = LoopBound(value: queued)
        let inbox = loop.inbox
        store.commitNew([prepared]) { written in
            inbox.post {
                guard written else { return reply.value(Self.storeRefusal("run of task \"\(prepared.task)\" was not queued")) }
                then.value(this.value.submit(prepared))
            }
        }
    }

    /// The answer to a request the store could not make durable (HTTP 503 with `Retry-After`).
    package static func storeRefusal(_ outcome: String) -> JSONValue {
        ["ok": false, "code": "unavailable", "retry_after": 5,
         "error": .string("the store cannot write now, so the \(outcome): see the agent's log and `agent-control status` (store.degraded); try again once it writes again (it retries every 5 s)")]
    }

    /// A run by id: from memory, else (off the loop) from the store.
    private func findRun(_ id: String, inbox: LoopInbox, _ done: @escaping (TaskRun?) -> Void) {
        if let run = knownRun(id) { return done(run) }
        guard let store else { return done(nil) }
        let reply = LoopBound(value: done)
        Task {
            let run = try? await store.run(id: id)
            inbox.post { reply.value(run) }
        }
    }

    private func listRuns(_ request: JSONValue, inbox: LoopInbox, respond: @escaping (JSONValue) -> Void) {
        var filter = RunFilter()
        if let value = request["task"] {
            guard let task = value.stringValue else { return respond(Self.refusal("invalid", "\"task\" must be a task's name (a string); found \(Describe.value(value))", pointer: "/task")) }
            filter.task = task
        }
        if let value = request["status"] {
            guard let status = value.stringValue.flatMap(TaskRun.Status.init(rawValue:)) else {
                return respond(Self.refusal("invalid", "\"status\" must be one of \(TaskRun.Status.allCases.map(\.rawValue).joined(separator: ", ")); found \(Describe.value(value))", pointer: "/status"))
            }
            filter.status = status
        }
        if let value = request["limit"] {
            guard let number = value.numberValue, let limit = number.intValue ?? (number.doubleValue.isFinite ? Int(saturating: number.doubleValue) : nil), limit >= 1 else {
                return respond(Self.refusal("invalid", "\"limit\" must be a whole number from 1 to 10000; found \(Describe.value(value))", pointer: "/limit"))
            }
            filter.limit = min(limit, 10_000)
        }
        guard let store else {
            return respond(["ok": true, "runs": .array(knownRuns(filter).map(\.json)), "stored": false,
                            "note": .string("the store is off: runs are kept in memory only (unfinished ones and the newest \(recentLimit) finished) and are gone when the agent stops")])
        }
        let reply = LoopBound(value: respond)
        let this = LoopBound(value: self)
        let chosen = filter
        Task {
            let result = await Result { try await store.list(chosen) }
            inbox.post { this.value.answerList(result, filter: chosen, respond: reply.value) }
        }
    }

    /// `task runs` with what the store has: memory is newer than the store (its writer
    /// batches), so it wins, and adds runs not written yet.
    private func answerList(_ result: Result<[TaskRun], any Error>, filter: RunFilter, respond: (JSONValue) -> Void) {
        switch result {
        case .failure(let error):
            respond(Self.refusal("unavailable", "cannot read the runs from the store: \(error)"))
        case .success(let stored):
            var merged: [String: TaskRun] = [:]
            for run in stored { merged[run.id] = knownRun(run.id) ?? run }
            for run in knownRuns(filter) { merged[run.id] = run }
            let list = merged.values.filter(filter.matches).sorted { ($0.queuedAt, $0.id) > ($1.queuedAt, $1.id) }.prefix(filter.limit)
            respond(["ok": true, "runs": .array(list.map(\.json)), "stored": true])
        }
    }

    /// `--at`: an ISO 8601 time, or a delay from now (`30s`, `10m`, `2h`, `1d`).
    package static func parseTime(_ text: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let unit = text.last, let factor = units[unit], let amount = Double(text.dropLast()), amount >= 0, amount.isFinite {
            return now + min(amount * factor, SettingsBounds.longestRetention)
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
