import AgentWork
import JSONSchema

extension CommandCatalog {
    /// The configuration commands (``SettingsCommands``) and `diagnostics`.
    package static let settings: [CommandDescription] = [
        CommandDescription(
            name: "settings_get",
            summary: "The settings file as it is (${env:NAME} references as written, never their values), its parsed document and its hash (send it back as if_match).",
            method: "GET", path: "/api/settings",
            answer: CommandDescription.object([
                "ok": ["const": true], "path": ["type": "string"], "hash": ["type": "string"], "text": ["type": "string"],
                "settings": ["description": "The parsed document; null when the file is not JSON (see parse_error)."],
                "parse_error": ["type": "string"],
            ], required: ["ok", "path", "hash", "text"]),
            // The file holds the users' password hashes: not for the read role.
            mutating: false, requiresAdmin: true),
        CommandDescription(
            name: "settings_change",
            summary: "Changes the settings: checked as validate-settings checks them (every error with its pointer, nothing written), written atomically keeping the file's formatting, applied by reload (the answer says what was kept, restarted, started, stopped). One change, or a list applied together.",
            method: "POST", path: "/api/settings/changes",
            request: .object(changeFields.merging(["changes": ["type": "array", "minItems": 1, "items": changeSchema,
                                                                "description": "Changes applied together, instead of one change at the top level."],
                                                    "if_match": ["type": "string", "description": "The hash settings_get returned: refused (409) if the file changed since."]],
                                                   uniquingKeysWith: { first, _ in first })
                .schema(description: "One change (action, name, settings, text) or a list of them (changes).")),
            answer: CommandDescription.object([
                "ok": ["const": true], "changed": ["type": "boolean"], "path": ["type": "string"], "hash": ["type": "string"],
                "message": ["type": "string"],
                "kept": names, "restarted": names, "started": names, "stopped": names, "notes": ["type": "array", "items": ["type": "string"]],
            ], required: ["ok", "changed", "hash"]),
            mutating: true),
        CommandDescription(
            name: "validate",
            summary: "The report of validate-settings --json for the settings file, or for a document given as text or as an object (nothing is written).",
            method: "POST", path: "/api/validate",
            request: CommandDescription.object([
                "text": ["type": "string", "description": "The document as text (as a settings editor has it)."],
                "settings": ["type": "object", "description": "The document."],
            ]),
            answer: CommandDescription.object([
                "ok": ["const": true], "file": ["type": "string"], "valid": ["type": "boolean"],
                "errors": ["type": "array", "items": issue], "modules": ["type": "array", "items": ["type": "object"]],
                "processes": ["type": "array", "items": ["type": "object"]],
            ], required: ["ok", "valid", "errors"]),
            // A document may enable any library the agent's user owns, and describing it runs
            // that library's code: not for the read role.
            mutating: false, requiresAdmin: true),
        CommandDescription(
            name: "modules",
            summary: "The enabled modules with their process types: kind, description, settings JSON Schema; and the host's schema.",
            method: "GET", path: "/api/modules",
            answer: CommandDescription.object([
                "ok": ["const": true], "file": ["type": "string"], "host_schema": ["type": "object"],
                "modules": ["type": "array", "items": CommandDescription.object([
                    "name": ["type": "string"], "file": ["type": "string"], "version": ["type": "string"], "available": ["type": "boolean"],
                    "builtin": ["type": "boolean"], "error": ["type": "object"],
                    "process_types": ["type": "array", "items": CommandDescription.object([
                        "type": ["type": "string"], "kind": ["type": "string"], "description": ["type": "string"],
                        "settings_schema": ["type": "object"], "subscribes": ["type": "array", "items": ["type": "string"]],
                    ], required: ["type", "kind", "settings_schema"], open: true)],
                ], required: ["name", "available", "process_types"], open: true)],
            ], required: ["ok", "modules"]),
            mutating: false),
        CommandDescription(
            name: "diagnostics",
            summary: "Versions, paths (settings, run folder, socket, log, store), the store's figures, the fork server, outputs, task notifications and limits.",
            method: "GET", path: "/api/diagnostics",
            answer: CommandDescription.object([
                "ok": ["const": true], "versions": ["type": "object"], "agent": ["type": "object"], "paths": ["type": "object"],
                "store": ["type": "object"], "fork_server": ["type": "object"], "outputs": ["type": "array"], "limits": ["type": "object"],
                "notifications": NotificationStatistics.schema, "assignment": assignmentStatisticsSchema,
            ], required: ["ok", "versions", "paths", "limits"]),
            mutating: false),
    ]

    private static let names: JSONValue = ["type": "array", "items": ["type": "string"]]
    private static let issue: JSONValue = CommandDescription.object([
        "file": ["type": "string"], "pointer": ["type": "string"], "message": ["type": "string"],
        "process": ["type": "string"], "follows_from": ["type": "string"],
    ], open: true)

    /// The fields of one change.
    private static let changeFields: JSONObject = [
        "action": ["type": "string", "enum": .array(SettingsChangeAction.names.map(JSONValue.string))],
        "name": ["type": "string", "minLength": 1, "description": "The module, process or workflow (every action but replace)."],
        "settings": ["type": "object", "description": "add_process, set_process: the process's whole settings object; add_workflow, set_workflow: the workflow's definition."],
        "step": ["type": "object", "description": "add_workflow_step: the step object."],
        "position": ["type": "integer", "minimum": 0, "description": "add_workflow_step: the step's index in the workflow's steps (absent: last)."],
        "text": ["type": "string", "description": "replace: the whole document as text."],
    ]

    private static let changeSchema: JSONValue = CommandDescription.object(changeFields, required: ["action"])
}

extension JSONObject {
    /// An object schema with these properties, closed, with a description.
    fileprivate func schema(description: String) -> JSONObject {
        ["type": "object", "properties": .object(self), "additionalProperties": false, "description": .string(description)]
    }

    fileprivate func merging(_ other: JSONObject, uniquingKeysWith: (JSONValue, JSONValue) -> JSONValue) -> JSONObject {
        var result = self
        for (key, value) in other { result[key] = result[key].map { uniquingKeysWith($0, value) } ?? value }
        return result
    }
}
