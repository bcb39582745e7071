import AgentBase
import JSONSchema

/// The workflow commands' shared schemas (the commands themselves are still declared in the
/// catalog).
public enum WorkflowCommands {
    /// A workflow run as the workflow commands show it (see ``WorkflowRun/json``).
    public static let runSchema: JSONValue = CommandSchema.object([
        "id": ["type": "string"], "workflow": ["type": "string"],
        "version": ["type": "string", "description": "The hash of the definition the run started with (it keeps it across reloads)."],
        "status": ["enum": .array(WorkflowRun.Status.allCases.map { .string($0.rawValue) })],
        "input": [:], "variables": ["type": "object"], "output": [:], "error": ["type": "string"],
        "requested_by": ["type": "string"], "started_at": ["type": "string", "format": "date-time"],
        "ended_at": ["type": "string", "format": "date-time"], "duration": ["type": "number", "description": "Seconds from start to end."],
    ], required: ["id", "workflow", "version", "status", "input", "started_at"], open: true)
}
