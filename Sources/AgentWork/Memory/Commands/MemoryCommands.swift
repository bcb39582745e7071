import AgentBase
import JSONSchema

/// The shared-memory commands (`agent-control memory …`, `/api/memory`): their shared schemas,
/// and the list the registry boxes. They run on ``MemoryService``.
package enum MemoryCommands {
    /// Every typed memory command.
    package static let all: [any AgentCommand.Type] = [
        MemoryListCommand.self, MemoryGetCommand.self, MemorySetCommand.self, MemoryDeleteCommand.self,
    ]

    package static let key: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": .number(JSONNumber(MemoryLimits.keyBytes)), "pattern": .string(MemoryLimits.noControlCharacters),
        "description": "The key (1 to 256 bytes of UTF-8, no control characters; `/` is an ordinary character, handy for prefixes).",
    ]
    package static let run: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": .number(JSONNumber(MemoryLimits.runIDBytes)), "pattern": .string(MemoryLimits.noControlCharacters),
        "description": "A workflow run's own scope (the run must exist: not_found otherwise); without it, the agent-wide scope.",
    ]
    package static let expectedVersion: JSONValue = [
        "type": "integer", "minimum": 0,
        "description": "Compare-and-set: write only if the key is at this version (0: only if it does not exist); refused with code `conflict` otherwise.",
    ]

    /// A key's entry as the memory commands show it (see ``MemoryEntry/json``).
    package static let entrySchema: JSONValue = CommandSchema.object([
        "key": ["type": "string"], "scope": ["type": "string", "description": "`agent`, or `run:<workflow run id>`."],
        "run": ["type": "string"], "version": ["type": "integer", "minimum": 1],
        "updated": ["type": "string", "format": "date-time"], "value": [:],
    ], required: ["key", "scope", "version", "updated", "value"])

    /// `{"ok": true, "entry": …}`.
    static let entryAnswerSchema: JSONValue = CommandSchema.object(["ok": ["const": true], "entry": entrySchema], required: ["ok", "entry"])

    /// An entry for the examples of the agreement test.
    static let exampleEntry: JSONValue = [
        "key": "greeting", "scope": "agent", "version": 2, "updated": "2026-11-24T07:00:00Z", "value": ["text": "hello"],
    ]

    /// The refusal when the agent has no shared memory.
    package static var unavailable: CommandError { MemoryError.storeOff.refusal }

    /// The scope a request names: a workflow run's, else the agent's.
    static func scope(run: String?) -> MemoryScope { run.map(MemoryScope.workflowRun) ?? .agent }
}

/// `{"ok": true, "entry": …}`: the answer of `memory_get` and `memory_set`.
package struct MemoryEntryAnswer: Encodable, Sendable {
    package let ok = true
    package var entry: JSONValue

    package init(_ entry: MemoryEntry) { self.entry = entry.json }
    init(json: JSONValue) { entry = json }
}

extension MemoryError {
    /// As a command's refusal: the same code and message, with `key`, `scope` and `version`.
    package var refusal: CommandError {
        var details = JSONObject()
        if let key { details["key"] = .string(key) }
        if let scope { details["scope"] = .string(scope.description) }
        if let currentVersion { details["version"] = .number(JSONNumber(currentVersion)) }
        return CommandError(CommandError.Code(rawValue: code.rawValue) ?? .failed, description, pointer: pointer, details: details.isEmpty ? nil : details)
    }
}
