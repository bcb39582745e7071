import AgentBase
import AgentSupervision
import JSONSchema

/// The task commands (`agent-control task …`, `/api/tasks`, `/api/runs`): their shared
/// schemas, and the list the registry boxes.
package enum TaskCommands {
    /// Every typed task command.
    package static let all: [any AgentCommand.Type] = [
        TaskListCommand.self, TaskRunCommand.self, TaskRunsCommand.self, TaskShowCommand.self, TaskRerunCommand.self, TaskCancelCommand.self,
    ]

    /// The refusal when the agent runs no tasks.
    static let unavailable = CommandError.unavailable("this agent runs no tasks")

    /// A run's id as a request member.
    package static let runID: JSONValue = ["type": "string", "minLength": 1, "description": "The run's id (as `task run` and `task runs` show it)."]

    /// The request of the commands on one run.
    static let runRequest: JSONValue = CommandSchema.object(["id": runID], required: ["id"])

    /// A run as the task commands show it (see ``TaskRun/json``).
    package static let runSchema: JSONValue = CommandSchema.object([
        "id": ["type": "string"], "task": ["type": "string"], "input": [:],
        "priority": ["enum": .array(TaskRun.Priority.allCases.map { .string($0.rawValue) })],
        "status": ["enum": .array(TaskRun.Status.allCases.map { .string($0.rawValue) })],
        "attempt": ["type": "integer", "minimum": 0, "description": "The attempt running or last run: every attempt begun, the interrupted ones included."],
        "interruptions": ["type": "integer", "minimum": 0,
                          "description": "Attempts interrupted from outside the work (the agent stopped or died, its executor's worker died): not counted against the retry policy; past the task's max_interruptions the run ends abandoned. Absent: none."],
        "requested_by": ["enum": .array(TaskRun.Origin.allCases.map { .string($0.rawValue) })],
        "queued_at": ["type": "string", "format": "date-time"], "not_before": ["type": "string", "format": "date-time"],
        "started_at": ["type": "string", "format": "date-time"], "ended_at": ["type": "string", "format": "date-time"],
        "next_attempt_at": ["type": "string", "format": "date-time"], "execution_time": ["type": "number", "description": "Seconds the last attempt took."],
        "output": [:], "error": ["type": "string"], "exit_code": ["type": "integer"], "signal": ["type": "string"],
        "stderr_tail": ["type": "string"], "rerun_of": ["type": "string"],
        "usage": ResourceUsage.schema,
        "idempotency_key": ["type": "string", "description": "What the run's work sees as AGENT_TASK_IDEMPOTENCY_KEY / TaskContext.idempotencyKey: the run id, or a workflow step's <run>/<step>/<attempt>."],
        "executor": ["type": "string", "description": "The executor of the running or last attempt (a declared one)."],
        "assigned_to": ["type": "string", "description": "The executor the run was assigned to by hand."],
        "require": ["type": "object", "description": "Labels the run's executor must carry, besides the task's."],
        "omitted": RunListing.omittedSchema,
    ], required: ["id", "task", "status", "attempt", "priority", "requested_by", "queued_at"], open: true)

    /// `{"ok": true, "run": …}`.
    package static let runAnswer: JSONValue = CommandSchema.object(["ok": ["const": true], "run": runSchema], required: ["ok", "run"])

    /// A run for the examples of the agreement test.
    static let exampleRun: JSONValue = [
        "id": "r1", "task": "report", "status": "queued", "attempt": 0, "priority": "normal", "requested_by": "cli",
        "queued_at": "2026-11-24T07:00:00Z", "input": [:],
    ]
}

extension TaskRun.Status: Codable {}
extension TaskRun.Priority: Codable {}
