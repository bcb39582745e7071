import AgentSupervision
import AgentWork
import JSONSchema

extension CommandCatalog {
    package static let runID: JSONValue = ["type": "string", "minLength": 1, "description": "The run's id (as `task run` and `task runs` show it)."]

    /// A run as the task commands show it (see ``TaskRun/json``).
    public static let runSchema: JSONValue = CommandDescription.object([
        "id": ["type": "string"], "task": ["type": "string"], "input": [:],
        "priority": ["enum": ["low", "normal", "high", "critical"]],
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
    ], required: ["id", "task", "status", "attempt", "priority", "requested_by", "queued_at"], open: true)

    package static let runAnswer: JSONValue = CommandDescription.object(["ok": ["const": true], "run": runSchema], required: ["ok", "run"])

    /// The task commands (`agent-control task …`, `/api/tasks`, `/api/runs`).
    package static let tasks: [CommandDescription] = [
        CommandDescription(
            name: "task_list", summary: "The tasks the settings define, with their queued and running runs.",
            method: "GET", path: "/api/tasks",
            answer: CommandDescription.object([
                "ok": ["const": true],
                "tasks": ["type": "array", "items": CommandDescription.object([
                    "name": ["type": "string"], "type": ["type": "string"], "description": ["type": "string"],
                    "timeout": ["type": "number"], "max_concurrent": ["type": "integer"], "retries": ["type": "object"],
                    "max_interruptions": ["type": "integer", "minimum": 0],
                    "command": ["type": "array", "items": ["type": "string"]], "shell": ["type": "boolean"],
                    "on_event": ["type": "string"], "input": [:], "queued": ["type": "integer"], "running": ["type": "integer"],
                ], required: ["name", "type"], open: true)],
            ], required: ["ok", "tasks"]),
            mutating: false),
        CommandDescription(
            name: "task_run", summary: "Queues a run of a task (now, or `at` a time) with an input valid against the task's input schema; with `wait`, answers when it has finished.",
            method: "POST", path: "/api/tasks/{name}/run",
            request: CommandDescription.object([
                "name": ["type": "string", "minLength": 1, "description": "The task's name in the settings."],
                "input": ["description": "The run's input (JSON; default {}), checked against the task's input schema."],
                "priority": ["enum": ["low", "normal", "high", "critical"], "default": "normal"],
                "at": ["type": "string", "description": "Not before this time: ISO 8601 (2026-11-24T07:00:00Z), or a delay from now (30s, 10m, 2h, 1d)."],
                "wait": ["type": "boolean", "default": false, "description": "Answer when the run has finished (succeeded, failed, timed_out, cancelled or abandoned)."],
                "require": ["type": "object", "additionalProperties": ["type": "string"], "description": "Labels the run's executor must carry, besides the task's."],
            ], required: ["name"]),
            answer: runAnswer,
            mutating: true),
        CommandDescription(
            name: "task_runs", summary: "Runs, newest first: queued, running, retrying and finished (as far as the store keeps them).",
            method: "GET", path: "/api/runs",
            request: CommandDescription.object([
                "task": ["type": "string", "description": "Only runs of this task."],
                "status": ["enum": .array(TaskRun.Status.allCases.map { .string($0.rawValue) }), "description": "Only runs with this status."],
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
            ]),
            answer: CommandDescription.object([
                "ok": ["const": true], "runs": ["type": "array", "items": runSchema],
                "stored": ["type": "boolean", "description": "false: the store is off, runs are kept in memory only (the newest finished ones) and are gone when the agent stops."],
                "note": ["type": "string"],
            ], required: ["ok", "runs", "stored"]),
            mutating: false),
        CommandDescription(
            name: "task_show", summary: "One run: its status, attempts, input, output, error, exit status and the tail of its stderr.",
            method: "GET", path: "/api/runs/{id}",
            request: CommandDescription.object(["id": runID], required: ["id"]),
            answer: runAnswer,
            mutating: false),
        CommandDescription(
            name: "task_rerun", summary: "Queues a new run of a run's task with the same input and priority.",
            method: "POST", path: "/api/runs/{id}/rerun",
            request: CommandDescription.object(["id": runID], required: ["id"]),
            answer: runAnswer,
            mutating: true),
        CommandDescription(
            name: "task_cancel", summary: "Cancels a queued, retrying or running run (a running one's whole process tree is killed).",
            method: "POST", path: "/api/runs/{id}/cancel",
            request: CommandDescription.object(["id": runID], required: ["id"]),
            answer: runAnswer,
            mutating: true),
    ]
}
