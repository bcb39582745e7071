import AgentWork
import JSONSchema

extension CommandCatalog {
    package static let memoryKey: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": .number(JSONNumber(MemoryLimits.keyBytes)),
        "description": "The key (1 to 256 bytes of UTF-8, no control characters; `/` is an ordinary character, handy for prefixes).",
    ]
    package static let memoryRun: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": .number(JSONNumber(MemoryLimits.runIDBytes)),
        "description": "A workflow run's own scope; without it, the agent-wide scope.",
    ]
    package static let memoryExpectedVersion: JSONValue = [
        "type": "integer", "minimum": 0,
        "description": "Compare-and-set: write only if the key is at this version (0: only if it does not exist); refused with code `conflict` otherwise.",
    ]

    /// A key's entry as the memory commands show it (see ``MemoryEntry/json``).
    public static let memoryEntrySchema: JSONValue = CommandDescription.object([
        "key": ["type": "string"], "scope": ["type": "string", "description": "`agent`, or `run:<workflow run id>`."],
        "run": ["type": "string"], "version": ["type": "integer", "minimum": 1],
        "updated": ["type": "string", "format": "date-time"], "value": [:],
    ], required: ["key", "scope", "version", "updated", "value"])

    /// The shared-memory commands (`agent-control memory …`, `/api/memory`).
    package static let memory: [CommandDescription] = [
        CommandDescription(
            name: "memory_list", summary: "Shared memory's keys in key order, with their values and versions: agent-wide, or a workflow run's (`run`); only those starting with `prefix`; page with `after`.",
            method: "GET", path: "/api/memory",
            request: CommandDescription.object([
                "run": memoryRun,
                "prefix": ["type": "string", "maxLength": .number(JSONNumber(MemoryLimits.keyBytes)), "description": "Only keys starting with this."],
                "after": ["type": "string", "description": "Only keys after this one (the `next` of the previous page)."],
                "limit": ["type": "integer", "minimum": 1, "maximum": .number(JSONNumber(MemoryLimits.listEntries)), "default": 100],
            ]),
            answer: CommandDescription.object([
                "ok": ["const": true], "entries": ["type": "array", "items": memoryEntrySchema],
                "next": ["type": "string", "description": "More keys follow: pass as `after`."],
            ], required: ["ok", "entries"]),
            mutating: false),
        CommandDescription(
            name: "memory_get", summary: "One key's value and version from shared memory (code `not_found` when there is none).",
            method: "GET", path: "/api/memory/entry",
            request: CommandDescription.object(["key": memoryKey, "run": memoryRun], required: ["key"]),
            answer: CommandDescription.object(["ok": ["const": true], "entry": memoryEntrySchema], required: ["ok", "entry"]),
            mutating: false),
        CommandDescription(
            name: "memory_set", summary: "Writes a JSON value (at most 256 KiB) at a key of shared memory; the key's version goes up by one. With `expected_version`, a compare-and-set.",
            method: "PUT", path: "/api/memory/entry",
            request: CommandDescription.object([
                "key": memoryKey, "run": memoryRun,
                "value": ["description": "Any JSON value, at most 256 KiB as compact JSON."],
                "expected_version": memoryExpectedVersion,
            ], required: ["key", "value"]),
            answer: CommandDescription.object(["ok": ["const": true], "entry": memoryEntrySchema], required: ["ok", "entry"]),
            mutating: true),
        CommandDescription(
            name: "memory_delete", summary: "Deletes a key of shared memory (no error when there is none: `deleted` says). With `expected_version`, only at that version.",
            method: "DELETE", path: "/api/memory/entry",
            request: CommandDescription.object(["key": memoryKey, "run": memoryRun, "expected_version": memoryExpectedVersion], required: ["key"]),
            answer: CommandDescription.object([
                "ok": ["const": true], "deleted": ["type": "boolean"], "entry": memoryEntrySchema,
            ], required: ["ok", "deleted"]),
            mutating: true),
    ]
}
