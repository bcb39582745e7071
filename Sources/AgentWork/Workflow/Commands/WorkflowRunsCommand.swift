import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_runs`: workflow runs, newest first, as far as the store keeps them.
package enum WorkflowRunsCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var workflow: String?
        package var status: WorkflowRun.Status?
        package var limit: Int?

        package init(workflow: String? = nil, status: WorkflowRun.Status? = nil, limit: Int? = nil) {
            self.workflow = workflow
            self.status = status
            self.limit = limit
        }

        /// The runs the request asks for.
        var filter: WorkflowRunFilter { WorkflowRunFilter(workflow: workflow, status: status, limit: limit ?? 100) }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var runs: [JSONValue]
        package var stored: Bool
        /// True when the list stopped at ``RunListing/answerLimit`` (nil otherwise).
        package var truncated: Bool?
        package var note: String?

        /// `cut`: the store stopped reading before the limit (``RunListPage/cut``).
        package init(runs: [JSONValue], stored: Bool, cut: Bool = false) {
            let fitting = RunListing.fitting(runs)
            self.runs = fitting.runs
            self.stored = stored
            truncated = fitting.truncated || cut ? true : nil
            note = fitting.truncated || cut ? RunListing.truncatedNote : nil
        }
    }

    package static let name = "workflow_runs"
    package static let summary = "Workflow runs, newest first: running, waiting and finished (as far as the store keeps them); a member longer than 4 KiB of JSON (an input, output, the variables or an error) is left out and named in the run's omitted: `workflow show` has it."
    package static let routes: [CommandRoute] = [.get("/api/workflow-runs")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "workflow": ["type": "string", "description": "Only runs of this workflow."],
        "status": ["enum": .array(WorkflowRun.Status.allCases.map { .string($0.rawValue) }), "description": "Only runs with this status."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "runs": ["type": "array", "items": WorkflowCommands.runSchema],
        "stored": ["type": "boolean", "description": "false: the store is off, runs are kept in memory only (the newest finished ones) and are gone when the agent stops."],
        "truncated": ["const": true, "description": "The list stopped at 4 MiB of JSON: these are its newest runs."],
        "note": ["type": "string"],
    ], required: ["ok", "runs", "stored"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(runs: [WorkflowCommands.exampleRun], stored: true)),
         (["workflow": "support", "status": "waiting", "limit": 10], Answer(runs: [], stored: false))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.listRuns(request.filter, respond: respond)
    }
}
