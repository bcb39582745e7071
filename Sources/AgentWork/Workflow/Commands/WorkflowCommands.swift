import AgentBase
import JSONSchema

/// The workflow commands (`agent-control workflow …`, `/api/workflows`, `/api/workflow-runs`):
/// their shared schemas, and the list the registry boxes.
public enum WorkflowCommands {
    /// Every typed workflow command: the runs' (on the engine) and the definitions' (on the
    /// settings file, ``WorkflowDefinitionHost``).
    package static let all: [any AgentCommand.Type] = [
        WorkflowGetCommand.self, WorkflowCreateCommand.self, WorkflowUpdateCommand.self, WorkflowDeleteCommand.self, WorkflowAddStepCommand.self,
        WorkflowListCommand.self, WorkflowRunCommand.self, WorkflowRunsCommand.self, WorkflowShowCommand.self, WorkflowCancelCommand.self,
        WorkflowApproveCommand.self, WorkflowRejectCommand.self, WorkflowSignalCommand.self,
    ]

    /// The refusal when the agent runs no workflows.
    static let unavailable = CommandError.unavailable("this agent runs no workflows")

    /// A workflow run's id as a request member.
    static let runID: JSONValue = ["type": "string", "minLength": 1, "description": "The workflow run's id (as `workflow run` and `workflow runs` show it)."]

    /// The request of the commands on one run.
    static let runRequest: JSONValue = CommandSchema.object(["id": runID], required: ["id"])

    /// A workflow run as the workflow commands show it (see ``WorkflowRun/json``).
    public static let runSchema: JSONValue = CommandSchema.object([
        "id": ["type": "string"], "workflow": ["type": "string"],
        "version": ["type": "string", "description": "The hash of the definition the run started with (it keeps it across reloads)."],
        "status": ["enum": .array(WorkflowRun.Status.allCases.map { .string($0.rawValue) })],
        "input": [:], "variables": ["type": "object"], "output": [:], "error": ["type": "string"],
        "requested_by": ["type": "string"], "started_at": ["type": "string", "format": "date-time"],
        "ended_at": ["type": "string", "format": "date-time"], "duration": ["type": "number", "description": "Seconds from start to end."],
        "signals": ["type": "array", "items": signalSchema, "description": "Signals sent to the run that no wait_signal step has taken yet."],
        "omitted": RunListing.omittedSchema,
    ], required: ["id", "workflow", "version", "status", "started_at"], open: true)

    /// A signal as a `wait_signal` step's output and a run's kept signals show it.
    static let signalSchema: JSONValue = CommandSchema.object([
        "name": ["type": "string"], "payload": [:], "time": ["type": "string", "format": "date-time"],
        "by": ["type": "string", "description": "Who sent it: the front, user and address, as the audit names them."],
    ], required: ["name", "payload", "time", "by"])

    /// One line of a run's step log (see ``WorkflowStepRecord/json``): a stable shape for the
    /// dashboard and the benchmarks.
    public static let stepSchema: JSONValue = CommandSchema.object([
        "step": ["type": "string"], "kind": ["enum": .array(WorkflowSettings.kinds.map { .string($0) })],
        "status": ["enum": .array(WorkflowStepRecord.Status.allCases.map { .string($0.rawValue) })],
        "attempt": ["type": "integer", "minimum": 1, "description": "1, one more per step retry or revisit (goto): part of the idempotency key."],
        "generation": ["type": "integer", "minimum": 1, "description": "The run's generation when the step started (a goto starts a new one)."],
        "started_at": ["type": "string", "format": "date-time"], "ended_at": ["type": "string", "format": "date-time"],
        "duration": ["type": "number"], "output": [:], "error": ["type": "string"],
        "task_run": ["type": "string", "description": "task steps: the task run."],
        "idempotency_key": ["type": "string", "description": "task steps: <run>/<step>/<attempt>, what the task sees."],
        "deadline": ["type": "string", "format": "date-time", "description": "When a wait, an approval or a task step times out."],
        "approvers": ["type": "array", "items": ["type": "string"]], "prompt": ["type": "string"], "decision": ["type": "object"],
        "branch": ["type": "string"], "type": ["type": "string"], "input": [:], "payload": [:],
        "where": ["description": "wait_event steps: the condition with its references resolved when the step started."],
        "signal": ["type": "string", "description": "wait_signal steps: the signal's name."],
    ], required: ["step", "kind", "status", "attempt", "generation", "started_at"], open: true)

    /// `{"ok": true, "run": …, "steps"?: […]}`.
    static let showAnswer: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "run": runSchema, "steps": ["type": "array", "items": stepSchema]], required: ["ok", "run"])

    /// A run for the examples of the agreement test.
    static let exampleRun: JSONValue = [
        "id": "w1", "workflow": "support", "version": "3f2a", "status": "running", "input": [:], "requested_by": "cli",
        "started_at": "2026-11-24T07:00:00Z",
    ]

    /// A step record for the examples of the agreement test.
    static let exampleStep: JSONValue = [
        "step": "ask", "kind": "approval", "status": "succeeded", "attempt": 1, "generation": 1,
        "started_at": "2026-11-24T07:00:00Z", "ended_at": "2026-11-24T07:05:00Z", "output": ["decision": "approved"],
    ]
}

extension WorkflowRun.Status: Codable {}
