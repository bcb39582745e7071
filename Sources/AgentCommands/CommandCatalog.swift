import AgentWork
import JSONSchema

/// The declarations of the commands not yet typed (see ``AgentCommand``): the registry
/// (``CommandRegistry``) wraps each in a legacy box run by the agent's handler for its name.
///
/// Left for the workflow, assignment and executor commands (typed on branch cmdwork): once they
/// are typed, `legacy` is empty and this enum, the legacy box (``AnyAgentCommand/init(legacy:)``)
/// and `Supervisor.LegacyOwner` go (the integrator deletes them at the merge).
public enum CommandCatalog {
    /// Every route of the untyped commands.
    public static let legacy: [CommandDescription] = store + executors + workflows

    /// Every route of every command (the registry's).
    public static var all: [CommandDescription] { CommandRegistry.standard.declarations }

    /// The declaration of `name` (for routes with a fixed action, the first).
    public static func named(_ name: String) -> CommandDescription? {
        CommandRegistry.standard.command(named: name)?.declarations.first
    }

    /// Whether the command `name` changes something (audited; admin only over HTTP).
    public static func isMutating(_ name: String) -> Bool {
        CommandRegistry.standard.command(named: name)?.mutating == true
    }

    /// A process as `status` shows it.
    public static var processSchema: JSONValue { SupervisionCommands.processSchema }

    package static let store: [CommandDescription] = [
        CommandDescription(
            name: "events", summary: "Events from the store, newest last; page with `after` (the last id seen).",
            method: "GET", path: "/api/events",
            request: CommandDescription.object([
                "type": ["type": "string", "description": "Only events of this type."],
                "source": ["type": "string", "description": "Only events from this process."],
                "since": ["type": "string", "description": "A duration back from now (30s, 10m, 2h, 1d) or an ISO 8601 time."],
                "after": ["type": "integer", "minimum": 0, "description": "Only events with a greater id (paging, following)."],
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
            ]),
            answer: CommandDescription.object([
                "ok": ["const": true],
                "events": ["type": "array", "items": CommandDescription.object([
                    "id": ["type": "integer"], "time": ["type": "string"], "type": ["type": "string"], "source": ["type": "string"], "payload": [:],
                ], open: true)],
                "next": ["type": "integer", "description": "The `after` that continues after these events."],
            ], required: ["ok", "events"]),
            mutating: false, executor: .store),
        CommandDescription(
            name: "history", summary: "The run history: starts, readiness, exits, restarts, state changes, commands (the audit).",
            method: "GET", path: "/api/history",
            request: CommandDescription.object([
                "process": ["type": "string", "description": "Only this process."],
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
            ]),
            answer: CommandDescription.object(["ok": ["const": true], "entries": ["type": "array", "items": ["type": "object"]]], required: ["ok", "entries"]),
            mutating: false, executor: .store),
    ]
}
