import AgentBase
import JSONSchema

/// The schedule commands (`agent-control schedule …`, `/api/schedules`): their shared schemas,
/// and the list the registry boxes.
package enum ScheduleCommands {
    /// Every typed schedule command.
    package static let all: [any AgentCommand.Type] = [
        ScheduleListCommand.self, ScheduleNextCommand.self, SchedulePauseCommand.self, ScheduleResumeCommand.self,
        ScheduleRunCommand.self, ScheduleHistoryCommand.self,
    ]

    /// The refusal when the agent runs no schedules.
    static let unavailable = CommandError.unavailable("this agent runs no schedules")

    static let name: JSONValue = ["type": "string", "minLength": 1, "description": "The schedule's name in the settings."]

    /// The request of the commands on one schedule.
    static let nameRequest: JSONValue = CommandSchema.object(["name": name], required: ["name"])

    /// A schedule as the schedule commands show it (see ``Scheduler/describe(_:)``).
    package static let scheduleSchema: JSONValue = CommandSchema.object([
        "name": ["type": "string"], "task": ["type": "string", "description": "The task each fire runs (absent when it starts a workflow)."],
        "workflow": ["type": "string", "description": "The workflow each fire starts a run of (absent when it runs a task)."],
        "cron": ["type": "string"], "every": ["type": "number", "description": "Seconds between fires, as the settings give it."], "at": ["type": "string"], "timezone": ["type": "string"],
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

    /// A schedule for the examples of the agreement test.
    static let exampleSchedule: JSONValue = ["name": "nightly", "timezone": "UTC", "enabled": true, "paused": false, "cron": "0 3 * * *", "task": "report"]
}
