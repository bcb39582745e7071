import AgentBase
import JSONSchema

/// The definition commands' shared schemas (the chatbot-management spec's workflow service).
enum WorkflowDefinitionCommands {
    /// The refusal when the agent was not started from a settings file.
    static let unavailable = CommandError.unavailable("this agent was not started from a settings file: its workflow definitions cannot be read or changed here")

    static let name: JSONValue = ["type": "string", "minLength": 1, "description": "The workflow's name in the settings (under \"workflows\")."]
    static let ifMatch: JSONValue = ["type": "string", "description": "The settings file's hash (workflow_get or settings_get return it): refused (409) if the file changed since."]

    /// What a change of a definition answers: as settings_change (written and reloaded).
    static let changeAnswer: JSONValue = CommandSchema.object([
        "ok": ["const": true], "changed": ["type": "boolean"], "workflow": ["type": "string"], "path": ["type": "string"], "hash": ["type": "string"],
        "message": ["type": "string"], "notes": ["type": "array", "items": ["type": "string"]],
        "kept": names, "restarted": names, "started": names, "stopped": names,
    ], required: ["ok", "changed", "hash"], open: true)
    private static let names: JSONValue = ["type": "array", "items": ["type": "string"]]

    /// An answer for the examples of the agreement test.
    static let exampleChange = WorkflowChangeAnswer(
        change: ["ok": true, "kept": ["feed"], "restarted": [], "started": [], "stopped": [], "notes": [], "changed": true, "path": "/srv/agent/settings.json",
                 "hash": "9c1e", "message": "the settings already say so: nothing was written, nothing reloaded"],
        workflow: "support")
}
