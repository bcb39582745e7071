import AgentBase
import AgentLoop
import JSONSchema

/// `task_runs`: runs, newest first, as far as the store keeps them.
package enum TaskRunsCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var task: String?
        package var status: TaskRun.Status?
        package var limit: Int?

        package init(task: String? = nil, status: TaskRun.Status? = nil, limit: Int? = nil) {
            self.task = task
            self.status = status
            self.limit = limit
        }

        /// The runs the request asks for.
        var filter: RunFilter { RunFilter(task: task, status: status, limit: limit ?? 100) }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var runs: [JSONValue]
        package var stored: Bool
        /// True when the list stopped at ``RunListing/answerLimit`` (nil otherwise).
        package var truncated: Bool?
        package var note: String?

        /// `cut`: the store stopped reading before the limit (``RunListPage/cut``).
        package init(runs: [JSONValue], stored: Bool, note: String? = nil, cut: Bool = false) {
            let fitting = RunListing.fitting(runs)
            self.runs = fitting.runs
            self.stored = stored
            let truncated = fitting.truncated || cut
            self.truncated = truncated ? true : nil
            let notes = [note, truncated ? RunListing.truncatedNote : nil].compactMap { $0 }
            self.note = notes.isEmpty ? nil : notes.joined(separator: "; ")
        }
    }

    package static let name = "task_runs"
    package static let summary = "Runs, newest first: queued, running, retrying and finished (as far as the store keeps them); a member longer than 4 KiB of JSON (an input, output or error) is left out and named in the run's omitted: `task show` has it."
    package static let routes: [CommandRoute] = [.get("/api/runs")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "task": ["type": "string", "description": "Only runs of this task."],
        "status": ["enum": .array(TaskRun.Status.allCases.map { .string($0.rawValue) }), "description": "Only runs with this status."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "runs": ["type": "array", "items": TaskCommands.runSchema],
        "stored": ["type": "boolean", "description": "false: the store is off, runs are kept in memory only (the newest finished ones) and are gone when the agent stops."],
        "truncated": ["const": true, "description": "The list stopped at 4 MiB of JSON: these are its newest runs."],
        "note": ["type": "string"],
    ], required: ["ok", "runs", "stored"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(runs: [TaskCommands.exampleRun], stored: true)),
         (["task": "report", "status": "timed_out", "limit": 10], Answer(runs: [], stored: false, note: "the store is off"))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.listRuns(request.filter, respond: respond)
    }
}
