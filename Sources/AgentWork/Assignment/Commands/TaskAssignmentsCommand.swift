import AgentBase
import AgentLoop
import JSONSchema

/// `task_assignments`: runs on executors now, and runs assigned by hand.
package enum TaskAssignmentsCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        /// Only this executor's runs.
        package var executor: String?
        /// Only the runs waiting for this person.
        package var user: String?

        package init(executor: String? = nil, user: String? = nil) {
            self.executor = executor
            self.user = user
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var runs: [JSONValue]
        /// True when the answer stopped at ``RunListing/answerLimit`` (nil otherwise).
        package var truncated: Bool?
        package var note: String?

        /// `runs`, oldest first, whole (a person needs a run's input), as many as fit in
        /// ``RunListing/answerLimit``: runs assigned by hand have no other bound.
        package init(runs: [JSONValue]) {
            let fitting = RunListing.fitting(runs)
            self.runs = fitting.runs
            truncated = fitting.truncated ? true : nil
            note = fitting.truncated ? TaskAssignmentsCommand.truncatedNote : nil
        }
    }

    /// The note of an answer that stopped at 4 MiB.
    package static let truncatedNote = "the answer stops at 4 MiB of JSON: these are the oldest runs; ask for one executor's or one person's (executor, user)"

    package static let name = "task_assignments"
    package static let summary = "Runs on executors now (running, or waiting for a person), and runs assigned by hand, oldest first and whole, up to 4 MiB of JSON; only one executor's or one person's with `executor` or `user`."
    package static let routes: [CommandRoute] = [.get("/api/assignments")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "executor": ["type": "string", "description": "Only this executor's runs."],
        "user": ["type": "string", "description": "Only the runs waiting for this person."],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "runs": ["type": "array", "items": TaskCommands.runSchema],
         "truncated": ["const": true, "description": "The answer stopped at 4 MiB of JSON: these are the oldest runs."],
         "note": ["type": "string"]], required: ["ok", "runs"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(runs: [TaskCommands.exampleRun])), (["executor": "gpu#1", "user": "alice"], Answer(runs: []))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        let runs = host.assignedRuns(executor: request.executor, user: request.user)
        guard runs.contains(where: \.held.isTextOnly) else { return respond(.success(Answer(runs: runs.map(\.json)))) }
        // A large input held as its text is read into a value off the loop (a MiB: tens of ms).
        let reply = LoopOwned(respond), inbox = host.loop.inbox
        let submitted = BlockingPool.storeReads.submit {
            let answer = Answer(runs: runs.map(\.json))
            inbox.post { reply.value(.success(answer)) }
        }
        if !submitted { respond(.success(Answer(runs: runs.map(\.json)))) }
    }
}
