import AgentBase
import Foundation
import JSONSchema

/// People's runs: `task assignments`, `task complete` and `task fail` (the commands are
/// ``AssignmentCommands``).
extension TaskCoordinator {
    /// What a person answers for a run that waits for them.
    package enum PersonOutcome: Sendable {
        /// `task_complete`, with the run's output.
        case completed(JSONValue)
        /// `task_fail`, saying why.
        case failed(String)
    }

    /// Runs on executors now and runs assigned by hand, oldest first, as the answer shows them.
    package func assignments(executor: String?, user: String?) -> [JSONValue] {
        assignedRuns(executor: executor, user: user).map(\.json)
    }

    /// Runs on executors now and runs assigned by hand, oldest first.
    package func assignedRuns(executor: String?, user: String?) -> [TaskRun] {
        // Executor → the people who may complete its runs (a user, or a role's users).
        let people = Dictionary(pool.members.map { ($0.name, $0.definition.people) }, uniquingKeysWith: { first, _ in first })
        return runs.values.filter { run in
            let on = active[run.id]?.executor ?? run.assignedTo
            guard let on else { return false }
            if let executor, on != executor { return false }
            if let user, people[on]?.contains(user) != true { return false }
            return true
        }.sorted { ($0.queuedAt, $0.sequence) < ($1.queuedAt, $1.sequence) }
    }

    /// `task complete RUN --output JSON` / `task fail RUN --error TEXT`: over HTTP only the
    /// run's person may (the control socket is the operator's). Answered once the run's end is
    /// written, or kept in the store's run journal; refused while the store could keep neither
    /// (see ``RunStore/keepsChangesNow``), and answered unavailable when it kept neither.
    package func personFinished(_ id: String, _ answer: PersonOutcome, caller: CommandCaller,
                                respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        let outcome: TaskRunOutcome
        switch personOutcome(id, answer, caller: caller) {
        case .failure(let refusal): return respond(.failure(refusal))
        case .success(let checked): outcome = checked
        }
        let done = outcome.status == .succeeded ? "completed" : "failed"
        // Its end would be neither written nor kept: a kill would have the run wait again.
        if store?.keepsChangesNow == false { return respond(.failure(Self.storeError("run was not \(done)"))) }
        let before = runs[id]
        _ = personRunner?.finish(id, outcome)
        guard let run = runs[id] ?? recent[id] ?? before else { return respond(.failure(.notFound("no run with id \"\(id)\""))) }
        afterKept(id) { kept in
            guard kept else { return respond(.failure(Self.notKept("the run \(id) was \(done)", undone: "it waits for its person again"))) }
            respond(.success(TaskRunAnswer(run)))
        }
    }

    /// What a person's answer makes of run `id`, or why it is refused: the run must wait for a
    /// person, the caller be that person (over HTTP), an output match the task's output schema.
    private func personOutcome(_ id: String, _ answer: PersonOutcome, caller: CommandCaller) -> Result<TaskRunOutcome, CommandError> {
        guard let run = runs[id] else {
            return .failure(.notFound("no unfinished run with id \"\(id)\"\(recent[id].map { " (it has \($0.status.rawValue))" } ?? "")"))
        }
        guard let attempt = active[id], let executor = attempt.executor, let member = pool.index(of: executor),
              pool.members[member].definition.isPerson, personRunner?.isWaiting(id) == true else {
            return .failure(.conflict("run \(id) does not wait for a person (it is \(run.status.rawValue)\(run.executor.map { " on \($0)" } ?? "")); only runs assigned to an executor with a \"user\" or a \"role\" are completed by hand"))
        }
        let definition = pool.members[member].definition
        // Who answers: the caller over HTTP, else the executor's person (the operator on the control socket).
        let user: String
        if caller.front != "control" {
            guard let name = caller.user, definition.people.contains(name) else {
                let whom = definition.user ?? "a user with the role \"\(definition.role ?? "")\" (\(definition.people.joined(separator: ", ")))"
                return .failure(CommandError(.forbidden, "run \(id) waits for \(whom); only \(definition.user == nil ? "they" : "that user") (or an operator on the control socket) complete\(definition.user == nil ? "" : "s") it"))
            }
            user = name
        } else {
            user = definition.user ?? "operator"
        }
        switch answer {
        case .failed(let error):
            return .success(TaskRunOutcome(status: .failed, error: "\(user): \(error)"))
        case .completed(let output):
            if let validator = outputValidators[run.task] {
                let problems = validator.validate(output)
                if !problems.isEmpty {
                    let list = problems.map { "/output\($0.instanceLocation): \($0.message)" }.joined(separator: "; ")
                    return .failure(CommandError(.invalid, "the output does not match the output schema of task \"\(run.task)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)",
                                                 pointer: "/output" + problems[0].instanceLocation,
                                                 errors: problems.map { ["pointer": .string("/output" + $0.instanceLocation), "message": .string($0.message)] }))
                }
            }
            return .success(TaskRunOutcome(status: .succeeded, output: output))
        }
    }
}
