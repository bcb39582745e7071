import AgentBase
import JSONSchema

/// The executor and assignment commands (`agent-control executor …`, `task assign|unassign|
/// set-strategy|assignments|complete|fail`): their shared schemas, and the list the registry boxes.
public enum AssignmentCommands {
    /// Every typed executor and assignment command.
    package static let all: [any AgentCommand.Type] = [
        ExecutorListCommand.self, ExecutorDrainCommand.self, ExecutorResumeCommand.self, TaskAssignCommand.self, TaskUnassignCommand.self,
        TaskSetStrategyCommand.self, TaskAssignmentsCommand.self, TaskCompleteCommand.self, TaskFailCommand.self,
    ]

    static let executorName: JSONValue = ["type": "string", "minLength": 1, "description": "The executor's name (a process of type \"executor\", or name#N for a replica)."]

    /// An executor as `executor list` shows it (see ``TaskCoordinator/describe(_:)``).
    public static let executorSchema: JSONValue = CommandSchema.object([
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
    public static let statisticsSchema: JSONValue = CommandSchema.object([
        "executors": ["type": "integer"],
        "executors_by_state": ["type": "object", "additionalProperties": ["type": "integer"]],
        "queued_by_priority": ["type": "object", "additionalProperties": ["type": "integer"]],
        "started": ["type": "integer", "description": "Runs started on executors since the agent started."],
        "wait_seconds_total": ["type": "number"], "wait_seconds_max": ["type": "number"], "wait_seconds_mean": ["type": "number"],
    ], required: ["executors", "executors_by_state", "queued_by_priority", "started"])

    static let strategiesSchema: JSONValue = CommandSchema.object([
        "agent": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) })],
        "tasks": ["type": "object", "description": "Task → its strategy (tasks some executor takes)."],
        "aging_interval": ["type": "number"],
    ], required: ["agent"], open: true)

    /// For the examples of the agreement test.
    static let exampleExecutor: JSONValue = [
        "name": "gpu#1", "process": "gpu", "state": "online", "running": 0, "max_concurrent": 2, "assigned": 3, "waiting": 0,
        "tasks": ["render": ["priority_boost": 0, "running": 0]], "labels": ["gpu": "yes"], "runs": [],
    ]
    static let exampleStrategies: JSONValue = ["agent": "best_fit", "tasks": ["render": "best_fit"], "aging_interval": 60]
}

extension AssignmentStrategy: Codable {}
