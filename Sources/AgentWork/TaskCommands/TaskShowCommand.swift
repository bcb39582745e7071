import AgentBase
import AgentLoop
import JSONSchema

/// `task_show`: one run — its status, input, output, error and stderr's tail — and every
/// attempt it made, each with its own times, status, exit status or error, tails, executor
/// and agent.
package enum TaskShowCommand: @preconcurrency AgentCommand {
    package typealias Request = TaskRunReference

    package static let name = "task_show"
    package static let summary = "One run: its status, input, output, error, exit status and the tail of its stderr, and each of its attempts (times, status, exit status or error, stderr and stdout tails, executor, agent)."
    package static let routes: [CommandRoute] = [.get("/api/task-runs/{id}"), .get("/api/runs/{id}")]
    package static let mutating = false
    package static var requestSchema: JSONValue { TaskCommands.runRequest }
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "run": TaskCommands.runSchema,
        "attempts": ["type": "array", "items": TaskAttempt.schema, "description": "Every attempt kept, oldest first (see attempts_not_kept)."],
        "attempts_not_kept": ["type": "integer", "minimum": 1,
                              "description": .string("Attempts of the run with no record: beyond the \(TaskAttempt.keptAttempts) kept per run (the first and the newest), or made before attempts were recorded. Absent: none.")],
    ], required: ["ok", "run", "attempts"])
    package static var examples: [(request: JSONValue, answer: TaskShowAnswer)] {
        [(["id": "r1"], TaskShowAnswer(json: TaskCommands.exampleRun, attempts: []))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                            respond: @escaping (Result<TaskShowAnswer, CommandError>) -> Void) {
        host.showRun(request.id, respond: respond)
    }
}

/// The answer of `task_show`: `{"ok": true, "run": …, "attempts": […]}`.
package struct TaskShowAnswer: Encodable, Sendable {
    package let ok = true
    package var run: JSONValue
    package var attempts: [TaskAttempt]
    package var attemptsNotKept: Int?

    /// `stored`: the attempts the store (or memory) has, completed by the run's record.
    package init(_ run: TaskRun, stored: [TaskAttempt]) {
        self.run = run.json
        attempts = TaskAttempt.shown(stored, of: run)
        let missing = run.attempt - attempts.count
        attemptsNotKept = missing > 0 ? missing : nil
    }

    init(json: JSONValue, attempts: [TaskAttempt]) {
        run = json
        self.attempts = attempts
    }

    enum CodingKeys: String, CodingKey {
        case ok, run, attempts
        case attemptsNotKept = "attempts_not_kept"
    }
}
