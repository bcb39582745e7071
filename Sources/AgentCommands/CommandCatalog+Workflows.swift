import AgentWork
import JSONSchema

extension CommandCatalog {
    package static let workflowRunID: JSONValue = ["type": "string", "minLength": 1, "description": "The workflow run's id (as `workflow run` and `workflow runs` show it)."]

    /// A workflow run as the workflow commands show it (see ``WorkflowRun/json``).
    public static var workflowRunSchema: JSONValue { WorkflowCommands.runSchema }

    /// One line of a run's step log (see ``WorkflowStepRecord/json``): a stable shape for the
    /// dashboard and the benchmarks.
    public static let workflowStepSchema: JSONValue = CommandDescription.object([
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
    ], required: ["step", "kind", "status", "attempt", "generation", "started_at"], open: true)

    package static let workflowShowAnswer: JSONValue = CommandDescription.object(
        ["ok": ["const": true], "run": workflowRunSchema, "steps": ["type": "array", "items": workflowStepSchema]], required: ["ok", "run"])

    package static let workflowDecision: JSONValue = CommandDescription.object([
        "id": workflowRunID,
        "step": ["type": "string", "minLength": 1, "description": "The approval step's id."],
        "comment": ["type": "string", "maxLength": 4096],
    ], required: ["id", "step"])

    package static let workflowName: JSONValue = ["type": "string", "minLength": 1, "description": "The workflow's name in the settings (under \"workflows\")."]
    package static let workflowIfMatch: JSONValue = ["type": "string", "description": "The settings file's hash (workflow_get or settings_get return it): refused (409) if the file changed since."]

    /// What a change of a definition answers: as settings_change (written and reloaded).
    package static let workflowChangeAnswer: JSONValue = CommandDescription.object([
        "ok": ["const": true], "changed": ["type": "boolean"], "workflow": ["type": "string"], "path": ["type": "string"], "hash": ["type": "string"],
        "message": ["type": "string"], "notes": ["type": "array", "items": ["type": "string"]],
    ], required: ["ok", "changed", "hash"], open: true)

    /// The definition commands: the chatbot-management spec's workflow service, each a change
    /// of the settings file as settings_change makes it (checked with every error at its
    /// pointer, nothing written when invalid; written atomically keeping the file's formatting;
    /// applied by reload: runs going keep the definition they started with).
    package static let workflowDefinitions: [CommandDescription] = [
        CommandDescription(
            name: "workflow_get", summary: "A workflow's definition as the settings file has it (${env:NAME} references as written), the version new runs use, and the file's hash (send it back as if_match).",
            method: "GET", path: "/api/workflows/{name}",
            request: CommandDescription.object(["name": workflowName], required: ["name"]),
            answer: CommandDescription.object([
                "ok": ["const": true], "name": ["type": "string"], "definition": ["type": "object"], "hash": ["type": "string"],
                "version": ["type": "string", "description": "The hash of the definition new runs use (absent while the definition is not loaded: invalid)."],
            ], required: ["ok", "name", "definition", "hash"]),
            mutating: false),
        CommandDescription(
            name: "workflow_create", summary: "Adds a workflow definition to the settings (refused if the name is taken): validated with every error at its JSON pointer (nothing written when invalid), written keeping the file's formatting, reloaded.",
            method: "POST", path: "/api/workflows",
            request: CommandDescription.object([
                "name": workflowName,
                "definition": ["type": "object", "description": "The workflow's definition: {\"input\"?, \"on_event\"?, \"steps\": [...]}."],
                "if_match": workflowIfMatch,
            ], required: ["name", "definition"]),
            answer: workflowChangeAnswer, mutating: true),
        CommandDescription(
            name: "workflow_update", summary: "Replaces a workflow's definition (validated, written, reloaded); runs going keep the definition they started with.",
            method: "PUT", path: "/api/workflows/{name}",
            request: CommandDescription.object([
                "name": workflowName,
                "definition": ["type": "object", "description": "The workflow's whole new definition."],
                "if_match": workflowIfMatch,
            ], required: ["name", "definition"]),
            answer: workflowChangeAnswer, mutating: true),
        CommandDescription(
            name: "workflow_delete", summary: "Removes a workflow's definition from the settings (refused, nothing written, while a schedule or anything else still names it); runs going finish on their copy.",
            method: "DELETE", path: "/api/workflows/{name}",
            request: CommandDescription.object(["name": workflowName, "if_match": workflowIfMatch], required: ["name"]),
            answer: workflowChangeAnswer, mutating: true),
        CommandDescription(
            name: "workflow_add_step", summary: "Inserts a step into a workflow's top-level steps at a position (0 first; absent: last), validated, written keeping the file's formatting, reloaded.",
            method: "POST", path: "/api/workflows/{name}/steps",
            request: CommandDescription.object([
                "name": workflowName,
                "step": ["type": "object", "description": "The step: {\"id\", and its kind's key}, e.g. {\"id\": \"notify\", \"publish\": {\"type\": \"ticket.closed\"}}."],
                "position": ["type": "integer", "minimum": 0, "description": "The step's index once inserted (0 first); absent: after the last."],
                "if_match": workflowIfMatch,
            ], required: ["name", "step"]),
            answer: workflowChangeAnswer, mutating: true),
    ]

    /// The workflow commands (`agent-control workflow …`, `/api/workflows`, `/api/workflow-runs`).
    package static let workflows: [CommandDescription] = workflowDefinitions + [
        CommandDescription(
            name: "workflow_list", summary: "The workflows the settings define: steps, version, input schema, trigger, runs going and waiting.",
            method: "GET", path: "/api/workflows",
            answer: CommandDescription.object([
                "ok": ["const": true],
                "workflows": ["type": "array", "items": CommandDescription.object([
                    "name": ["type": "string"], "description": ["type": "string"], "version": ["type": "string"],
                    "steps": ["type": "array", "items": ["type": "string"]], "definition": ["type": "object"], "input": [:],
                    "on_event": ["type": "string"], "running": ["type": "integer"], "waiting": ["type": "integer"],
                ], required: ["name", "version", "steps"], open: true)],
            ], required: ["ok", "workflows"]),
            mutating: false),
        CommandDescription(
            name: "workflow_run", summary: "Starts a run of a workflow with an input valid against its input schema; with `wait`, answers when it has finished, with its step log.",
            method: "POST", path: "/api/workflows/{name}/run",
            request: CommandDescription.object([
                "name": ["type": "string", "minLength": 1, "description": "The workflow's name in the settings."],
                "input": ["description": "The run's input (JSON; default {}), checked against the workflow's input schema."],
                "wait": ["type": "boolean", "default": false, "description": "Answer when the run has finished (succeeded, failed or cancelled)."],
            ], required: ["name"]),
            answer: workflowShowAnswer, mutating: true),
        CommandDescription(
            name: "workflow_runs", summary: "Workflow runs, newest first: running, waiting and finished (as far as the store keeps them).",
            method: "GET", path: "/api/workflow-runs",
            request: CommandDescription.object([
                "workflow": ["type": "string", "description": "Only runs of this workflow."],
                "status": ["enum": .array(WorkflowRun.Status.allCases.map { .string($0.rawValue) }), "description": "Only runs with this status."],
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
            ]),
            answer: CommandDescription.object([
                "ok": ["const": true], "runs": ["type": "array", "items": workflowRunSchema], "stored": ["type": "boolean"],
            ], required: ["ok", "runs"]),
            mutating: false),
        CommandDescription(
            name: "workflow_show", summary: "One workflow run with its step log: each step's status, attempt, duration, output and error, in the order they started.",
            method: "GET", path: "/api/workflow-runs/{id}",
            request: CommandDescription.object(["id": workflowRunID], required: ["id"]),
            answer: workflowShowAnswer, mutating: false),
        CommandDescription(
            name: "workflow_cancel", summary: "Cancels a workflow run: its going task runs are cancelled, its waits and approvals end.",
            method: "POST", path: "/api/workflow-runs/{id}/cancel",
            request: CommandDescription.object(["id": workflowRunID], required: ["id"]),
            answer: CommandDescription.object(["ok": ["const": true], "run": workflowRunSchema], required: ["ok", "run"]),
            mutating: true),
        CommandDescription(
            name: "workflow_approve", summary: "Approves a waiting approval step (over HTTP: as one of its approvers, a user or role — any role may send it, the step checks who), with a comment; audited.",
            method: "POST", path: "/api/workflow-runs/{id}/steps/{step}/approve",
            request: workflowDecision,
            answer: CommandDescription.object(["ok": ["const": true], "step": workflowStepSchema], required: ["ok", "step"]),
            mutating: true, requiresAdmin: false),
        CommandDescription(
            name: "workflow_reject", summary: "Rejects a waiting approval step (the run fails with the comment); over HTTP as one of its approvers (any role may send it, the step checks who); audited.",
            method: "POST", path: "/api/workflow-runs/{id}/steps/{step}/reject",
            request: workflowDecision,
            answer: CommandDescription.object(["ok": ["const": true], "step": workflowStepSchema], required: ["ok", "step"]),
            mutating: true, requiresAdmin: false),
    ]
}
