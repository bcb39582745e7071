import AgentWork
import JSONSchema

/// The declarations of the commands not yet typed (see ``AgentCommand``): the registry
/// (``CommandRegistry``) wraps each in a legacy box run by the agent's handler for its name.
public enum CommandCatalog {
    /// Every route of the untyped commands.
    public static let legacy: [CommandDescription] = supervision + health + chat + store + settings + memory + fleet

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

    package static let processName: JSONValue = ["type": "string", "minLength": 1, "description": "The process's name in the settings (a process with replicas: all of them), or one replica's, NAME#N."]

    /// A process as `status` shows it.
    public static let processSchema: JSONValue = CommandDescription.object([
        "name": ["type": "string"], "type": ["type": "string"], "module": ["type": "string"],
        "state": ["type": "string", "enum": ["starting", "running", "backoff", "stopping", "stopped", "exited", "failed", "suspended", "disabled"]],
        "pid": ["type": "integer"], "restarts": ["type": "integer", "minimum": 0],
        "state_seconds": ["type": "number"], "retry_in": ["type": "number"], "reason": ["type": "string"],
        "exit_code": ["type": "integer"], "last_exit": ["type": "string"], "last_exit_code": ["type": "integer"],
        "last_signal": ["type": "string"], "stop_signal": ["type": "string"],
        "events_emitted": ["type": "integer"], "events_delivered": ["type": "integer"], "events_dropped": ["type": "integer"],
        "queued_bytes": ["type": "integer"], "paused": ["type": "boolean"], "times_paused": ["type": "integer"],
        "restarting": ["type": "boolean"], "cpu_seconds": ["type": "number"], "rss_bytes": ["type": "integer"],
        "replica_of": ["type": "string", "description": "A replica's process: its name in the settings (the replica is NAME#N)."],
        "replica": ["type": "integer", "minimum": 1, "description": "A replica's number."],
    ], required: ["name", "state"], open: true)

    package static let supervision: [CommandDescription] = [
        CommandDescription(
            name: "status", summary: "The agent and every process: state, pid, restarts, events, queue; the store, outputs and fork server.",
            method: "GET", path: "/api/status",
            answer: CommandDescription.object([
                "ok": ["const": true], "pid": ["type": "integer"], "uptime": ["type": "number"], "stopping": ["type": "boolean"],
                "processes": ["type": "array", "items": processSchema],
                "store": ["type": "object"], "outputs": ["type": "array"], "fork_server": ["type": "object"],
                "loop": CommandDescription.object(["longest_turn": ["type": "number", "minimum": 0], "slow_turns": ["type": "integer", "minimum": 0]],
                                                  required: ["longest_turn", "slow_turns"]),
                "notifications": NotificationStatistics.schema, "assignment": assignmentStatisticsSchema,
            ], required: ["ok", "processes"], open: true),
            mutating: false),
        CommandDescription(
            name: "reload", summary: "Re-reads the settings and applies only the differences: the answer says what was kept, restarted, started and stopped.",
            method: "POST", path: "/api/reload",
            answer: CommandDescription.object(["ok": ["const": true]], required: ["ok"], open: true),
            mutating: true),
        CommandDescription(
            name: "stop", summary: "Stops every process and the agent.",
            method: "POST", path: "/api/stop", mutating: true),
    ] + ["start", "stop", "restart"].map { action in
        CommandDescription(
            name: "process", summary: "\(action.prefix(1).uppercased() + action.dropFirst()) one process.",
            method: "POST", path: "/api/processes/{name}/\(action)", fixed: ["action": .string(action)],
            request: CommandDescription.object(["name": processName], required: ["name"]),
            answer: CommandDescription.object(["ok": ["const": true], "process": processSchema,
                                               "processes": ["type": "array", "items": processSchema, "description": "A process with replicas (named without #N): each replica."]],
                                              required: ["ok"], open: true),
            mutating: true)
    } + [
        CommandDescription(
            name: "logs", summary: "A process's recent log: what its workers wrote on stdout and stderr and the agent's lines about it (the last 2,000 lines or 512 KiB); follow with `after`.",
            method: "GET", path: "/api/processes/{name}/logs",
            request: CommandDescription.object([
                "name": processName,
                "lines": ["type": "integer", "minimum": 0, "description": "At most this many lines: the newest, or with `after` the oldest after it."],
                "since": ["type": ["string", "number"], "description": "Only lines since then: seconds back from now, a duration (30s, 10m, 2h, 1d) or an ISO 8601 time."],
                "after": ["type": "integer", "minimum": 0, "description": "Only lines with a greater sequence number (paging, following: the `next` of the previous answer)."],
            ], required: ["name"]),
            answer: CommandDescription.object([
                "ok": ["const": true],
                "lines": ["type": "array", "items": CommandDescription.object([
                    "seq": ["type": "integer", "description": "Grows through the agent's run, over every process."],
                    "time": ["type": "string", "format": "date-time"],
                    "stream": ["type": "string", "enum": ["stdout", "stderr", "supervisor"]],
                    "text": ["type": "string"],
                    "process": ["type": "string", "description": "The replica the line is about, when the name is a process with replicas."],
                ], required: ["seq", "time", "stream", "text"])],
                "next": ["type": "integer", "description": "Pass as `after` to get only the lines that come after these."],
            ], required: ["ok", "lines", "next"]),
            mutating: false),
    ]

    package static let conversation: JSONValue = ["type": "string", "minLength": 1, "maxLength": 200, "default": "default", "description": "The conversation (default: \"default\")."]

    package static let chat: [CommandDescription] = [
        CommandDescription(
            name: "chat", summary: "Sends a message to the chatbot process and waits for its answer (at most 30 s).",
            method: "POST", path: "/api/chat",
            request: CommandDescription.object([
                "text": ["type": "string", "minLength": 1, "maxLength": 1_048_576, "description": "At most the control socket's request limit (1 MiB)."],
                "conversation": conversation,
                "context": ["type": "object", "description": "Passed to the chatbot with the message (a user id, a channel…); the rest adapter forwards it."],
            ], required: ["text"]),
            answer: CommandDescription.object(["ok": ["const": true], "text": ["type": "string"]], required: ["ok"], open: true),
            mutating: true),
        CommandDescription(
            name: "chat_history", summary: "A conversation's messages, oldest first.",
            method: "GET", path: "/api/chat/{conversation}",
            request: CommandDescription.object([
                "conversation": conversation,
                "after": ["type": "integer", "minimum": 0, "description": "Only messages after this id."],
                "limit": ["type": "integer", "minimum": 1, "maximum": 10000],
            ]),
            answer: CommandDescription.object(["ok": ["const": true], "messages": ["type": "array", "items": ["type": "object"]]], required: ["ok"], open: true),
            mutating: false),
        CommandDescription(
            name: "chat_clear", summary: "Clears a conversation's history.",
            method: "DELETE", path: "/api/chat/{conversation}",
            // Not required: the socket's clients may leave it out ("default"); HTTP has it in the path.
            request: CommandDescription.object(["conversation": conversation]),
            mutating: true),
    ]

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
