import AgentBase
import Foundation
import JSONSchema

/// The assignment commands, and people's runs: `task complete` and `task fail`.
extension TaskCoordinator {
    /// The answer of an executor or assignment command; nil for the other task commands.
    package func answerAssignment(_ request: JSONValue, caller: CommandCaller?) -> JSONValue? {
        let command = request["command"]?.stringValue ?? ""
        func text(_ key: String, _ what: String) -> String? {
            guard let value = request[key]?.stringValue, !value.isEmpty else { return nil }
            return value
        }
        switch command {
        case "executor_list":
            return listExecutors()
        case "executor_drain", "executor_resume":
            guard let name = text("name", "") else {
                return Self.refusal("invalid", "expected \"name\": the executor's name (a string, as `agent-control executor list` shows it)", pointer: "/name")
            }
            return setDraining(name, command == "executor_drain")
        case "task_assign":
            guard let id = text("id", "") else { return Self.refusal("invalid", "expected \"id\": the run's id", pointer: "/id") }
            guard let to = text("to", "") else { return Self.refusal("invalid", "expected \"to\": an executor's name (`agent-control executor list`)", pointer: "/to") }
            return assign(id, to: to)
        case "task_unassign":
            guard let id = text("id", "") else { return Self.refusal("invalid", "expected \"id\": the run's id", pointer: "/id") }
            return unassign(id)
        case "task_set_strategy":
            guard let strategy = request["strategy"]?.stringValue.flatMap(AssignmentStrategy.init(rawValue:)) else {
                return Self.refusal("invalid", "\"strategy\" must be one of \(AssignmentStrategy.names); found \(request["strategy"].map(Describe.value) ?? "nothing")", pointer: "/strategy")
            }
            if let task = request["task"], task.stringValue?.isEmpty != false {
                return Self.refusal("invalid", "\"task\" must be a task's name (a string); found \(Describe.value(task))", pointer: "/task")
            }
            return setStrategy(strategy, task: request["task"]?.stringValue)
        case "task_assignments":
            return assignments(executor: request["executor"]?.stringValue, user: request["user"]?.stringValue)
        case "task_complete", "task_fail":
            guard let id = text("id", "") else { return Self.refusal("invalid", "expected \"id\": the run's id", pointer: "/id") }
            return personFinished(id, request: request, failed: command == "task_fail", caller: caller)
        default:
            return nil
        }
    }

    /// Runs on executors now and runs assigned by hand, oldest first.
    package func assignments(executor: String?, user: String?) -> JSONValue {
        // Executor → the people who may complete its runs (a user, or a role's users).
        let people = Dictionary(pool.members.map { ($0.name, $0.definition.people) }, uniquingKeysWith: { first, _ in first })
        let list = runs.values.filter { run in
            let on = active[run.id]?.executor ?? run.assignedTo
            guard let on else { return false }
            if let executor, on != executor { return false }
            if let user, people[on]?.contains(user) != true { return false }
            return true
        }.sorted { ($0.queuedAt, $0.sequence) < ($1.queuedAt, $1.sequence) }
        return ["ok": true, "runs": .array(list.map(\.json))]
    }

    /// `task complete RUN --output JSON` / `task fail RUN --error TEXT`.
    private func personFinished(_ id: String, request: JSONValue, failed: Bool, caller: CommandCaller?) -> JSONValue {
        guard let run = runs[id] else {
            return Self.refusal("not_found", "no unfinished run with id \"\(id)\"\(recent[id].map { " (it has \($0.status.rawValue))" } ?? "")")
        }
        guard let attempt = active[id], let executor = attempt.executor, let member = pool.index(of: executor),
              pool.members[member].definition.isPerson, personRunner?.isWaiting(id) == true else {
            return Self.refusal("conflict", "run \(id) does not wait for a person (it is \(run.status.rawValue)\(run.executor.map { " on \($0)" } ?? "")); only runs assigned to an executor with a \"user\" or a \"role\" are completed by hand")
        }
        let definition = pool.members[member].definition
        // Who answers: the caller over HTTP, else the executor's person (the operator on the control socket).
        let user: String
        if let caller, caller.front != "control" {
            guard let name = caller.user, definition.people.contains(name) else {
                let whom = definition.user ?? "a user with the role \"\(definition.role ?? "")\" (\(definition.people.joined(separator: ", ")))"
                return Self.refusal("forbidden", "run \(id) waits for \(whom); only \(definition.user == nil ? "they" : "that user") (or an operator on the control socket) complete\(definition.user == nil ? "" : "s") it")
            }
            user = name
        } else {
            user = definition.user ?? "operator"
        }
        var outcome: TaskRunOutcome
        if failed {
            guard let error = request["error"]?.stringValue, !error.isEmpty else {
                return Self.refusal("invalid", "expected \"error\": why the run failed (a non-empty string)", pointer: "/error")
            }
            outcome = TaskRunOutcome(status: .failed, error: "\(user): \(error)")
        } else {
            let output = request["output"] ?? .object([:])
            if let validator = outputValidators[run.task] {
                let problems = validator.validate(output)
                if !problems.isEmpty {
                    let list = problems.map { "/output\($0.instanceLocation): \($0.message)" }.joined(separator: "; ")
                    return ["ok": false, "code": "invalid", "pointer": .string("/output" + problems[0].instanceLocation),
                            "error": .string("the output does not match the output schema of task \"\(run.task)\" (\(problems.count) error\(problems.count == 1 ? "" : "s")): \(list)"),
                            "errors": .array(problems.map { ["pointer": .string("/output" + $0.instanceLocation), "message": .string($0.message)] })]
                }
            }
            outcome = TaskRunOutcome(status: .succeeded, output: output)
        }
        _ = personRunner?.finish(id, outcome)
        return ["ok": true, "run": (runs[id] ?? recent[id] ?? run).json]
    }
}
