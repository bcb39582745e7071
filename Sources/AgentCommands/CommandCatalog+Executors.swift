import AgentWork
import JSONSchema

extension CommandCatalog {
    package static let executorName: JSONValue = ["type": "string", "minLength": 1, "description": "The executor's name (a process of type \"executor\", or name#N for a replica)."]

    /// An executor as `executor list` shows it (see ``TaskCoordinator/describe(_:)``).
    public static let executorSchema: JSONValue = CommandDescription.object([
        "name": ["type": "string"], "process": ["type": "string"],
        "state": ["enum": .array(ExecutorPool.State.allCases.map { .string($0.rawValue) })],
        "running": ["type": "integer"], "max_concurrent": ["type": "integer"],
        "assigned": ["type": "integer", "description": "Runs given to it since the agent started."],
        "waiting": ["type": "integer", "description": "Runs assigned to it by hand, waiting for its room."],
        "tasks": ["type": "object", "description": "Task → priority_boost, max_concurrent, running."],
        "labels": ["type": "object"], "priority_preference": ["type": "string"], "user": ["type": "string"],
        "runs": ["type": "array", "items": ["type": "string"]],
    ], required: ["name", "state", "running", "max_concurrent"], open: true)

    /// The assignment's figures (`assignment` of `status` and `diagnostics`, `statistics` of
    /// `executor list`): executors by state, the queue by priority, the waits.
    public static let assignmentStatisticsSchema: JSONValue = CommandDescription.object([
        "executors": ["type": "integer"],
        "executors_by_state": ["type": "object", "additionalProperties": ["type": "integer"]],
        "queued_by_priority": ["type": "object", "additionalProperties": ["type": "integer"]],
        "started": ["type": "integer", "description": "Runs started on executors since the agent started."],
        "wait_seconds_total": ["type": "number"], "wait_seconds_max": ["type": "number"], "wait_seconds_mean": ["type": "number"],
    ], required: ["executors", "executors_by_state", "queued_by_priority", "started"])

    package static let strategiesSchema: JSONValue = CommandDescription.object([
        "agent": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) })],
        "tasks": ["type": "object", "description": "Task → its strategy (tasks some executor takes)."],
        "aging_interval": ["type": "number"],
    ], required: ["agent"], open: true)

    /// Executors, assignment and people's runs (`agent-control executor …`, `task assign|unassign|set-strategy|complete|fail`).
    package static let executors: [CommandDescription] = [
        CommandDescription(
            name: "executor_list", summary: "The executors: state (online, busy, draining, offline), running and maximum runs, tasks, labels; the strategies and statistics (executors by state, queue by priority, waits).",
            method: "GET", path: "/api/executors",
            answer: CommandDescription.object([
                "ok": ["const": true], "executors": ["type": "array", "items": executorSchema], "strategies": strategiesSchema,
                "statistics": assignmentStatisticsSchema,
            ], required: ["ok", "executors"]),
            mutating: false),
        CommandDescription(
            name: "executor_drain", summary: "Drains an executor: it finishes the runs it has and takes nothing new (kept across restarts) until resumed.",
            method: "POST", path: "/api/executors/{name}/drain",
            request: CommandDescription.object(["name": executorName], required: ["name"]),
            answer: CommandDescription.object(["ok": ["const": true], "executor": executorSchema], required: ["ok", "executor"]),
            mutating: true),
        CommandDescription(
            name: "executor_resume", summary: "Resumes a drained executor: it takes runs again.",
            method: "POST", path: "/api/executors/{name}/resume",
            request: CommandDescription.object(["name": executorName], required: ["name"]),
            answer: CommandDescription.object(["ok": ["const": true], "executor": executorSchema], required: ["ok", "executor"]),
            mutating: true),
        CommandDescription(
            name: "task_assign", summary: "Assigns a queued or retrying run to an executor by hand: it waits for that executor's room, whatever the strategy.",
            method: "POST", path: "/api/runs/{id}/assign",
            request: CommandDescription.object(["id": runID, "to": executorName], required: ["id", "to"]),
            answer: runAnswer, mutating: true),
        CommandDescription(
            name: "task_unassign", summary: "Undoes a manual assignment: the run goes back to the strategy.",
            method: "POST", path: "/api/runs/{id}/unassign",
            request: CommandDescription.object(["id": runID], required: ["id"]),
            answer: runAnswer, mutating: true),
        CommandDescription(
            name: "task_set_strategy", summary: "Sets the assignment strategy of the agent, or of one task (kept in the store: it wins over the settings until changed again).",
            method: "POST", path: "/api/assignment/strategy",
            request: CommandDescription.object([
                "strategy": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) })],
                "task": ["type": "string", "minLength": 1, "description": "Only this task (default: the agent's strategy)."],
            ], required: ["strategy"]),
            answer: CommandDescription.object(["ok": ["const": true], "strategies": strategiesSchema], required: ["ok", "strategies"]),
            mutating: true),
        CommandDescription(
            name: "task_assignments", summary: "Runs on executors now (running, or waiting for a person), and runs assigned by hand; only one executor's or one person's with `executor` or `user`.",
            method: "GET", path: "/api/assignments",
            request: CommandDescription.object([
                "executor": ["type": "string", "description": "Only this executor's runs."],
                "user": ["type": "string", "description": "Only the runs waiting for this person."],
            ]),
            answer: CommandDescription.object(["ok": ["const": true], "runs": ["type": "array", "items": runSchema]], required: ["ok", "runs"]),
            mutating: false),
        CommandDescription(
            name: "task_complete", summary: "Completes a run that waits for a person, with its output (checked against the task's output schema). Over HTTP only that person may.",
            method: "POST", path: "/api/runs/{id}/complete",
            request: CommandDescription.object(["id": runID, "output": ["description": "The run's output (JSON; default {})."]], required: ["id"]),
            answer: runAnswer, mutating: true, requiresAdmin: false),
        CommandDescription(
            name: "task_fail", summary: "Fails a run that waits for a person, saying why (retried if its task's policy allows). Over HTTP only that person may.",
            method: "POST", path: "/api/runs/{id}/fail",
            request: CommandDescription.object(["id": runID, "error": ["type": "string", "minLength": 1, "description": "Why it failed."]], required: ["id", "error"]),
            answer: runAnswer, mutating: true, requiresAdmin: false),
    ]
}
