import AgentWork
import JSONSchema

extension CommandCatalog {
    package static let scheduleName: JSONValue = ["type": "string", "minLength": 1, "description": "The schedule's name in the settings."]

    /// A schedule as the schedule commands show it (see ``Scheduler/describe(_:)``).
    public static let scheduleSchema: JSONValue = CommandDescription.object([
        "name": ["type": "string"], "task": ["type": "string", "description": "The task each fire runs (absent when it starts a workflow)."],
        "workflow": ["type": "string", "description": "The workflow each fire starts a run of (absent when it runs a task)."],
        "cron": ["type": "string"], "every": ["type": "string"], "at": ["type": "string"], "timezone": ["type": "string"],
        "enabled": ["type": "boolean"], "paused": ["type": "boolean"],
        "catch_up": ["enum": .array(ScheduleDefinition.CatchUp.allCases.map { .string($0.rawValue) })],
        "max_catch_up": ["type": "integer"], "catch_up_window": ["type": "number"],
        "overlap": ["enum": .array(ScheduleDefinition.Overlap.allCases.map { .string($0.rawValue) })],
        "jitter": ["type": "number"], "description": ["type": "string"],
        "next_fire": ["type": "string", "format": "date-time", "description": "Local time with its UTC offset; absent when paused, disabled or none is coming."],
        "last_fire": ["type": "string", "format": "date-time", "description": "The planned time of the last fire that ran."],
        "last_run": ["type": "string"],
        "last_result": ["enum": .array(Set(TaskRun.Status.allCases.map(\.rawValue) + WorkflowRun.Status.allCases.map(\.rawValue)).sorted().map { .string($0) }),
                        "description": "The last run's status: a task run's, or a workflow run's."],
        "waiting": ["type": "string", "format": "date-time", "description": "overlap queue: the fire waiting for the previous run."],
        "fired": ["type": "integer"], "missed": ["type": "integer"], "skipped": ["type": "integer"],
    ], required: ["name", "timezone", "enabled", "paused"], open: true)

    package static let scheduleAnswer: JSONValue = CommandDescription.object(
        ["ok": ["const": true], "changed": ["type": "boolean"], "schedule": scheduleSchema], required: ["ok", "schedule"])

    /// The schedule commands (`agent-control schedule …`, `/api/schedules`).
    package static let schedules: [CommandDescription] = [
        CommandDescription(
            name: "schedule_list", summary: "The schedules: timing, next and last fire, last result, paused, fires missed and skipped.",
            method: "GET", path: "/api/schedules",
            answer: CommandDescription.object(["ok": ["const": true], "schedules": ["type": "array", "items": scheduleSchema]], required: ["ok", "schedules"]),
            mutating: false),
        CommandDescription(
            name: "schedule_next", summary: "A schedule's coming fire times, as ISO 8601 local times with their UTC offset.",
            method: "GET", path: "/api/schedules/{name}/next",
            request: CommandDescription.object([
                "name": scheduleName,
                "count": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 10],
            ], required: ["name"]),
            answer: CommandDescription.object([
                "ok": ["const": true], "schedule": ["type": "string"], "timezone": ["type": "string"],
                "times": ["type": "array", "items": ["type": "string", "format": "date-time"]],
            ], required: ["ok", "times"]),
            mutating: false),
        CommandDescription(
            name: "schedule_pause", summary: "Pauses a schedule (kept across restarts): its fire times are skipped until it is resumed.",
            method: "POST", path: "/api/schedules/{name}/pause",
            request: CommandDescription.object(["name": scheduleName], required: ["name"]),
            answer: scheduleAnswer, mutating: true),
        CommandDescription(
            name: "schedule_resume", summary: "Resumes a paused schedule from now (the fire times while paused are recorded as skipped).",
            method: "POST", path: "/api/schedules/{name}/resume",
            request: CommandDescription.object(["name": scheduleName], required: ["name"]),
            answer: scheduleAnswer, mutating: true),
        CommandDescription(
            name: "schedule_run", summary: "Runs a schedule's task (or starts its workflow) now, with its input (recorded in its history as run now; its timing is unchanged).",
            method: "POST", path: "/api/schedules/{name}/run",
            request: CommandDescription.object(["name": scheduleName], required: ["name"]),
            answer: CommandDescription.object([
                "ok": ["const": true], "run": ["anyOf": [runSchema, workflowRunSchema], "description": "The task run, or the workflow run the fire started."],
                "workflow_run": workflowRunSchema, "schedule": scheduleSchema,
            ], required: ["ok", "run"]),
            mutating: true),
        CommandDescription(
            name: "schedule_history", summary: "A schedule's history, newest first: each fire (planned and actual time, run, result) and the fire times missed or skipped, with the reason.",
            method: "GET", path: "/api/schedules/{name}/history",
            request: CommandDescription.object([
                "name": scheduleName,
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
            ], required: ["name"]),
            answer: CommandDescription.object([
                "ok": ["const": true], "stored": ["type": "boolean"],
                "history": ["type": "array", "items": CommandDescription.object([
                    "schedule": ["type": "string"], "planned": ["type": "string", "format": "date-time"],
                    "actual": ["type": "string", "format": "date-time"],
                    "outcome": ["enum": .array(ScheduleHistoryEntry.Outcome.allCases.map { .string($0.rawValue) })],
                    "run_id": ["type": "string"], "result": ["type": "string"], "reason": ["type": "string"],
                    "count": ["type": "integer", "description": "Fire times the line stands for (a catch-up folds several into one run)."],
                    "first_planned": ["type": "string", "format": "date-time"], "lateness": ["type": "number", "description": "Seconds from the planned time to the request."],
                ], required: ["schedule", "actual", "outcome", "count"], open: true)],
            ], required: ["ok", "history"]),
            mutating: false),
    ]
}
