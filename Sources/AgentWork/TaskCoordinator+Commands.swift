import AgentBase
import AgentCore
import AgentLoop
import Foundation
import JSONSchema

extension TaskCoordinator {
    /// `task_list`: each task as the settings define it, with its queued and running runs.
    package func taskList() -> [JSONValue] {
        let counts = Dictionary(figures.map { ($0.task, $0) }, uniquingKeysWith: { first, _ in first })
        return definitions.values.sorted { $0.name < $1.name }.map { task -> JSONValue in
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
    }

    /// `task_run`: the request's members are checked by the registry; what it cannot check
    /// (the task exists, the time reads, the input matches the task's schema) is checked here.
    package func runTask(_ request: TaskRunCommand.Request, origin: TaskRun.Origin,
                         respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        let name = request.name
        // The request's own members first, whatever the agent's tasks.
        var notBefore: Double?
        if let text = request.at {
            guard let time = Self.parseTime(text) else {
                return respond(.failure(.invalid("/at: expected \(Self.timeForm); found \"\(text)\"", pointer: "/at")))
            }
            notBefore = time
        }
        guard definitions[name] != nil else {
            let names = definitions.keys.sorted()
            return respond(.failure(.notFound("no task named \"\(name)\"\(Suggestions.hint(for: name, in: names)); tasks: \(names.isEmpty ? "none (add them under \"tasks\" in the settings)" : names.joined(separator: ", "))")))
        }
        let require = request.require ?? [:]
        // In a fleet another agent's executors may carry them: the run waits for one.
        if !require.isEmpty, shared == nil, let problem = requirementProblem(task: name, require) {
            return respond(.failure(.invalid(problem, pointer: "/require")))
        }
        let input = request.input ?? .object([:])
        if let problem = request.nestingProblem { return respond(.failure(.invalid(problem.message, pointer: problem.pointer))) }
        let problems = inputProblems(input, task: name, nestingChecked: true)
        guard problems.isEmpty else {
            let list = problems.map { "\($0.pointer): \($0.message)" }.joined(separator: "; ")
            return respond(.failure(CommandError(.invalid, "the input does not match the input schema of task \"\(name)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)",
                                                 pointer: problems[0].pointer,
                                                 errors: problems.map { ["pointer": .string($0.pointer), "message": .string($0.message)] })))
        }
        var prepared = prepare(task: name, input: input, priority: request.priority ?? .normal, notBefore: notBefore, requestedBy: origin)
        // Both until the run is queued or started: a command started at once takes the value.
        if let text = request.inputText { prepared.held.setText(text, keepingValue: true) }
        prepared.require = require
        submitDurably(prepared, respond: respond) { [weak self] run in self?.answer(run, wait: request.wait ?? false, respond: respond) }
    }

    /// Answers with a queued run, or with `wait` once it has finished.
    private func answer(_ run: TaskRun, wait: Bool, respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        guard wait else { return respond(.success(TaskRunAnswer(run))) }
        whenFinished(run.id) { respond(.success(TaskRunAnswer($0))) }
    }

    /// `task_rerun`: a new run of the run's task with its input and priority.
    package func rerunRun(_ id: String, wait: Bool = false, respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        withRun(id, respond: respond) { [unowned self] run in
            guard definitions[run.task] != nil else {
                return respond(.failure(.notFound("the task \"\(run.task)\" of run \(id) is no longer in the settings")))
            }
            // Taken as it is held: a large input stays its text, not read and written again.
            let held = run.held
            if held.text.map({ $0.count > InputSize.largest }) ?? (InputSize.problem(held.value) != nil) {
                return respond(.failure(CommandError(.tooLarge, "the input of run \(id) is more than \(InputSize.largest) bytes of JSON (1 MiB), the most a run's input may have (it was taken before runs were bounded): run the task with a smaller input")))
            }
            var prepared = prepare(task: run.task, input: .null, priority: run.priority, requestedBy: .rerun)
            prepared.held = held
            prepared.rerunOf = id
            submitDurably(prepared, respond: respond) { [weak self] run in self?.answer(run, wait: wait, respond: respond) }
        }
    }

    /// `task_cancel`: answers at once for a queued run, once it has stopped for a running one.
    package func cancelRun(_ id: String, respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        withRun(id, respond: respond) { [unowned self] run in
            // A fleet's run this agent does not hold: queued in the shared queue, or running
            // on another agent.
            if runs[id] == nil, shared != nil, !run.status.isFinished { return cancelShared(run, respond: respond) }
            guard !run.status.isFinished, runs[id] != nil else {
                return respond(.failure(.conflict("run \(id) has already finished (\(run.status.rawValue)); nothing to cancel")))
            }
            // Its end would be neither written nor kept: a kill would have the run go on.
            if store?.keepsChangesNow == false { return respond(.failure(Self.storeError("run was not cancelled"))) }
            let answer = { [unowned self] (ended: TaskRun) in
                afterKept(id) { kept in
                    guard kept else {
                        return respond(.failure(Self.notKept("the run \(id) was cancelled", undone: "it goes on at the next start (a running one runs again, as an interrupted attempt)")))
                    }
                    respond(.success(TaskRunAnswer(ended)))
                }
            }
            let wasRunning = active[id] != nil
            let current = cancel(id)
            if wasRunning {
                whenFinished(id, answer)
            } else {
                answer(current ?? run)
            }
        }
    }

    /// Cancels a run of the fleet's shared queue that no agent holds, in the database; one
    /// running on another agent is refused, saying where.
    private func cancelShared(_ run: TaskRun, respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        guard let store, run.status == .queued || run.status == .retrying else {
            let agent = run.agent.map { "agent \($0)" } ?? "another agent"
            return respond(.failure(.conflict("run \(run.id) runs on \(agent) of the fleet; cancel it there (`agent-control task cancel \(run.id)` on that agent)")))
        }
        var cancelled = run
        cancelled.status = .cancelled
        cancelled.error = "cancelled before it ran"
        cancelled.endedAt = Date().timeIntervalSince1970
        cancelled.nextAttemptAt = nil
        let final = cancelled
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        Task.detached {
            let outcome = await Result { try await store.cancelQueued(final) }
            inbox.post {
                switch outcome {
                case .success(true): reply.value(.success(TaskRunAnswer(final)))
                case .success(false): reply.value(.failure(.conflict("run \(final.id) was claimed by an agent of the fleet meanwhile; cancel it on that agent (`agent-control task runs` shows where it runs)")))
                case .failure(let error): reply.value(.failure(.unavailable("run \(final.id) was not cancelled: the fleet's database: \(error)")))
                }
            }
        }
    }

    /// Calls `body` with the run `id`, or refuses: it is not known.
    func withRun<Answer>(_ id: String, respond: @escaping (Result<Answer, CommandError>) -> Void, _ body: @escaping (TaskRun) -> Void) {
        findRun(id) { run, unreadable in
            guard let run else {
                // The store could not be read (the fleet's database away): it may be there.
                if let unreadable { return respond(.failure(.unavailable("run \(id) cannot be looked up now: \(unreadable); try again once the store answers"))) }
                return respond(.failure(.notFound("no run with id \"\(id)\"; `agent-control task runs` lists them")))
            }
            body(run)
        }
    }

    /// Queues a run a request asked for once the store has it, then calls `queued` with it:
    /// an answered run is never lost. In the store's run journal at once when it can
    /// (``RunStore/journalNew(_:)``), else once the store's writer has it. While the store
    /// cannot write, the request is refused (``storeError(_:)``) and nothing is queued. No
    /// store, or a fleet's: queued at once — refused (``FleetNotJoined``) before the agent has
    /// joined its fleet.
    private func submitDurably(_ prepared: TaskRun, respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void,
                               queued: @escaping (TaskRun) -> Void) {
        if let shared, !shared.joined { return respond(.failure(FleetNotJoined.error("the run of task \"\(prepared.task)\" was not queued"))) }
        if shared == nil, let problem = heldInputProblem(adding: prepared) { return respond(.failure(problem)) }
        guard let store, shared == nil else { return queued(submit(prepared)) }
        if store.journalNew(prepared) { return queued(submit(prepared)) }
        // Counted against the bound while it waits for the commit, so that requests waiting
        // together cannot pass it.
        let reserved = prepared.held.textBytes
        pendingInputBytes += reserved
        // Three boxes, not one of a tuple: destructuring a tuple of a class and closures from a
        // box released the coordinator once too often on the refusing path (Swift 6.3).
        let reply = LoopOwned(respond)
        let then = LoopOwned(queued)
        let inbox = loop.inbox
        store.commitNew([prepared]) { written in
            inbox.post {
                self.pendingInputBytes -= reserved
                guard written else { return reply.value(.failure(Self.storeError("run of task \"\(prepared.task)\" was not queued"))) }
                then.value(self.submit(prepared))
            }
        }
    }

    /// The most bytes of input text the unfinished runs of this agent's own queue may hold
    /// (``heldInputBytes``) before a request for one more is refused, unless the coordinator's
    /// ``heldInputLimit`` says otherwise: 256 MiB. Inputs are held
    /// in memory until their run ends; 100 queued runs of 1 MiB once took the supervisor past a GB.
    nonisolated package static let defaultHeldInputLimit = 256 << 20

    /// Why a request for `run` is refused for the input the queue holds already (HTTP 503 with
    /// `Retry-After`), or nil.
    func heldInputProblem(adding run: TaskRun) -> CommandError? {
        guard lacksInputRoom(for: run) else { return nil }
        let mib = heldInputLimit >> 20
        return .unavailable("the run of task \"\(run.task)\" was not queued: the unfinished runs of this agent hold \(heldInputBytes >> 20) MiB of input already, and their inputs may take at most \(mib) MiB of memory; "
                            + "try again once some have ended (`agent-control task runs --status queued`), or pass a file's path or a URL to the data instead of the data",
                            retryAfter: 5)
    }

    /// Whether the input text `run` holds would take the unfinished runs' beyond
    /// ``heldInputLimit`` (a request's or an event's run is then not queued).
    func lacksInputRoom(for run: TaskRun) -> Bool {
        let adding = run.held.textBytes
        return adding > 0 && heldInputBytes + pendingInputBytes + adding > heldInputLimit
    }

    /// The answer to a person's change made in memory that the store neither wrote nor kept
    /// (its run journal had no room left): `done` happened, and a kill before the store writes
    /// again makes `undone` so.
    nonisolated package static func notKept(_ done: String, undone: String, advice: String = "") -> CommandError {
        .unavailable("\(done), but the store cannot write now and had no room left to keep it: if the agent is killed before the store writes again, \(undone). `agent-control status` (store.degraded) says why\(advice)")
    }

    /// Calls `done` (on the loop) once the changes of run `id` recorded so far are written or
    /// kept where a kill does not lose them (true), or neither (false); at once without a store.
    func afterKept(_ id: String, _ done: @escaping (Bool) -> Void) {
        guard let store else { return done(true) }
        let owned = LoopOwned(done)
        let inbox = loop.inbox
        store.whenKept(id) { kept in inbox.post { owned.value(kept) } }
    }

    /// The refusal of a request the store could not make durable (HTTP 503 with `Retry-After`).
    nonisolated package static func storeError(_ outcome: String) -> CommandError {
        .unavailable("the store cannot write now, so the \(outcome): `agent-control status` (store.degraded) and the agent's log say why and what to do; try again once it writes again (it retries every 5 s, but a store whose file was removed needs a restart)",
                     retryAfter: 5)
    }

    /// A run by id: an unfinished one from memory; a finished one only if the store still has
    /// it (the retention may have deleted it since), memory's copy winning as the newer; without
    /// a store, from memory.
    /// `done` gets the run, or nil and why the store could not be read (nil: it was, and the
    /// run is not there).
    private func findRun(_ id: String, _ done: @escaping (TaskRun?, String?) -> Void) {
        if let run = runs[id] { return done(run, nil) }
        guard let store else { return done(recent[id], nil) }
        let finished = recent[id]
        let wasLetGo = letGo.contains(id)
        let reply = LoopOwned(done)
        let inbox = loop.inbox
        Task.detached {
            var stored: TaskRun?
            var unreadable: String?
            do { stored = try await store.run(id: id) } catch { unreadable = "\(error)" }
            // Read back as a value: a large input held as its text again (a rerun counts it,
            // answers leave it out), written here, off the loop.
            stored?.holdLargeInputAsText()
            // Not written yet (a run that ended within the commit interval, kept in memory or
            // just let go from it as large): wait for the writes; if they are not through in
            // time (a long retention pass), memory answers.
            var flushed = true
            if stored == nil, wasLetGo || finished != nil {
                flushed = await Self.flush(store)
                do {
                    stored = try await store.run(id: id)
                    stored?.holdLargeInputAsText()
                    unreadable = nil
                } catch {}
            }
            // Unreadable: memory's copy, when it has one, rather than nothing.
            let run = stored.map { finished ?? $0 } ?? (flushed && unreadable == nil ? nil : finished)
            let why = run == nil ? unreadable : nil
            inbox.post { reply.value(run, why) }
        }
    }

    /// Calls `done` with a finished run memory let go of, read from the store; a run the store
    /// lacks, or has unfinished, waits as in ``whenFinished(_:_:)``.
    func whenStored(_ id: String, _ done: @escaping (TaskRun) -> Void) {
        // Waiting at once, so that an end while the store is read is not missed; called once.
        let once = OnceFlag()
        let call: (TaskRun) -> Void = { run in if once.claim() { done(run) } }
        waiters[id, default: []].append(call)
        findRun(id) { [weak self] run, _ in
            guard let self, runs[id] == nil, let run = run ?? recent[id], run.status.isFinished else { return }
            // Finished: no other end will come for it (other readers of the store have their own).
            waiters[id] = nil
            call(run)
        }
    }

    /// Waits for the changes handed to `store` so far to be written, at most `limit` seconds:
    /// true when they were, and a finished run the store lacks is then one the retention
    /// deleted; false when the time ran out (the store is slow) or the store cannot write (it
    /// kept them unwritten).
    nonisolated static func flush(_ store: any RunStore, within limit: Double = 2) async -> Bool {
        await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            let once = OnceFlag()
            let resume: @Sendable (Bool) -> Void = { flushed in if once.claim() { continuation.resume(returning: flushed) } }
            Task.detached {
                await store.flush()
                // A store that cannot write kept them (in memory, or its run journal) unwritten.
                resume(store.writesNow)
            }
            DispatchQueue.global().asyncAfter(deadline: .now() + limit) { resume(false) }
        }
    }

    /// `task_runs`: from the store merged with memory, newest first, each as a list shows it
    /// (``RunListing``). Off the loop: the loop hands over its maps (copied on write) and
    /// takes the answer.
    package func listRuns(_ filter: RunFilter, respond: @escaping (Result<TaskRunsCommand.Answer, CommandError>) -> Void) {
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        let (store, memory, recent, recentLimit) = (store, runs, recent, recentLimit)
        Task.detached {
            let answer: Result<TaskRunsCommand.Answer, CommandError>
            if let store {
                // A finished run is listed from the store alone, once what memory has is
                // written there: one the retention deleted is gone from the list too.
                // Not through in time: memory's recent runs are listed too, as the newer.
                let known = await Self.flush(store) ? Array(memory.values) : Array(memory.values) + recent.values
                switch await Result(awaiting: { try await store.list(filter) }) {
                case .failure(let error):
                    answer = .failure(.unavailable("cannot read the runs from the store: \(error)"))
                case .success(let stored):
                    answer = .success(TaskRunsCommand.Answer(runs: Self.merged(stored.runs, known: known, memory: memory, recent: recent, filter: filter),
                                                             stored: true, cut: stored.cut))
                }
            } else {
                let known = Array(memory.values) + recent.values
                answer = .success(TaskRunsCommand.Answer(runs: Self.merged([], known: known, memory: memory, recent: recent, filter: filter), stored: false,
                                                         note: "the store is off: runs are kept in memory only (unfinished ones and the newest \(recentLimit) finished) and are gone when the agent stops"))
            }
            inbox.post { reply.value(answer) }
        }
    }

    /// A list with what the store has: memory is newer than the store (its writer batches),
    /// so it wins, and adds runs not written yet.
    nonisolated private static func merged(_ stored: [ListedRun<TaskRun>], known: [TaskRun], memory: [String: TaskRun], recent: [String: TaskRun],
                                           filter: RunFilter) -> [JSONValue] {
        var merged: [String: ListedRun<TaskRun>] = [:]
        for listed in stored { merged[listed.run.id] = (memory[listed.run.id] ?? recent[listed.run.id]).map { ListedRun($0) } ?? listed }
        for run in known where filter.matches(run) { merged[run.id] = ListedRun(run) }
        return merged.values.filter { filter.matches($0.run) }
            .sorted { ($0.run.queuedAt, $0.run.sequence, $0.run.id) > ($1.run.queuedAt, $1.run.sequence, $1.run.id) }
            .prefix(max(filter.limit, 0))
            .map { RunListing.shown($0.run.json, omitted: $0.omitted) }
    }

    /// `--at`: an ISO 8601 time, or a delay from now (`30s`, `10m`, `2h`, `1d`).
    /// Nil past the bounds too, rather than a time clamped without a word (a delay of `1e308s`
    /// ran in 100 years, year 99999 in 2262, year 1 at once): a delay of at most 100 years, a
    /// time from 1970 to 100 years from now.
    nonisolated package static func parseTime(_ text: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let unit = text.last, let factor = units[unit], let amount = Double(text.dropLast()), amount >= 0 {
            return amount * factor <= SettingsBounds.longestRetention ? now + amount * factor : nil
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var date = formatter.date(from: text)
        if date == nil {
            formatter.formatOptions = [.withInternetDateTime]
            date = formatter.date(from: text)
        }
        guard let time = date?.timeIntervalSince1970 else { return nil }
        return time >= 0 && time <= now + SettingsBounds.longestRetention ? time : nil
    }

    /// What ``parseTime(_:now:)`` takes, for refusals.
    nonisolated package static let timeForm = "an ISO 8601 time from 1970-01-01T00:00:00Z to 100 years from now (e.g. 2026-11-24T07:00:00Z), or a delay from now of at most 100 years (30s, 10m, 2h, 1d)"
}
