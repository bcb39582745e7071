import AgentBase
import AgentCommands
import AgentCore
import AgentOutputs
import AgentStore
import AgentWork
import JSONSchema

/// The host's own JSON Schema: the first layer of settings validation. It covers the
/// top-level keys and the host-level keys of each process; the rest of a process's keys are
/// validated against its type's schema (the second layer).
public enum HostSchema {
    /// A timeout or delay in seconds: at most a day (``SettingsBounds/longestTimeout``).
    static let timeout: JSONValue = ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout)]
    /// A window in seconds: at most a week (``SettingsBounds/longestWindow``).
    static let window: JSONValue = ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestWindow)]

    /// `schema` with a description (for the settings reference: docs/reference/settings.md).
    static func described(_ schema: JSONValue, _ description: String) -> JSONValue {
        var object = schema.objectValue ?? [:]
        object["description"] = .string(description)
        return .object(object)
    }

    /// The schema document (draft 2020-12).
    public static let document: JSONValue = [
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://agentruntime.invalid/schemas/settings.json",
        "title": "AgentRuntime settings",
        "type": "object",
        "required": ["enabled_modules", "processes"],
        "additionalProperties": false,
        "properties": [
            "enabled_modules": [
                "description": "Modules to load: names (resolved under modules/, AGENT_MODULE_PATH, next to agent-control) or paths to lib<name>.so.",
                "type": "array",
                "items": ["type": "string", "minLength": 1],
                "uniqueItems": true,
            ],
            "processes": [
                "description": "Process name → its settings: host-level keys plus the settings of its type.",
                "type": "object",
                "additionalProperties": ["$ref": "#/$defs/process"],
            ],
            "store": StoreSettings.schema,
            "log": LogSettings.schema,
            "http": HTTPSettings.schema,
            "tasks": TaskSettings.schema,
            "schedules": ScheduleSettings.schema,
            "assignment": ExecutorSettings.assignmentSchema,
            "workflows": WorkflowSettings.schema,
            "workflow_limits": WorkflowLimits.schema,
            "fleet": FleetSettings.schema,
            "events": EventSettings.schema,
            "trust_module_files": [
                "description": "Load module files even when another user than the agent's (or root) owns them, or could write them or a folder above them. Off by default: such modules are refused.",
                "type": "boolean", "default": false,
            ],
            "outputs": [
                "description": "Where events and messages are also sent: JSON lines to stdout or a file, or an HTTP webhook.",
                "type": "array",
                "items": OutputConfiguration.schema,
            ],
            "notifications": described(TaskNotifier.settingsSchema, "Defaults for every task's \"notify\": when to notify, by email or to the outputs, and how many notifications may wait."),
        ],
        "$defs": [
            "process": [
                "type": "object",
                "required": ["type"],
                "properties": [
                    "type": ["type": "string", "minLength": 1, "description": "The process type to run."],
                    "enabled": ["type": "boolean", "default": true,
                                "description": "false: the process is configured but not started; status lists it as disabled."],
                    "module": ["type": "string", "minLength": 1, "description": "The module providing the type, when several do."],
                    "subscribe": [
                        "type": "array", "items": ["type": "string", "minLength": 1], "uniqueItems": true,
                        "description": "Monitors: event types to receive (\"*\" for all).",
                    ],
                    "replicas": [
                        "description": "Workers of this process, each its own OS process named NAME#1 … NAME#N with its own restart state; a monitor's events are spread among them (each event to one replica). Without it: one worker named NAME.",
                        "type": "integer", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.mostReplicas),
                    ],
                    "restart": [
                        "description": "When to restart the worker: \"always\", \"on-failure\", \"never\", or an object with \"policy\" and backoff and start-limit settings.",
                        "type": ["string", "object"],
                        "examples": ["on-failure", ["policy": "always", "max_restarts": 10, "within": 300]],
                        "if": ["type": "string"],
                        "then": ["$ref": "#/$defs/restartPolicy"],
                        "else": [
                            "additionalProperties": false,
                            "properties": [
                                "policy": ["$ref": "#/$defs/restartPolicy", "description": "always, on-failure (not after a clean exit) or never."],
                                "initial_delay": described(timeout, "Seconds before the first restart after a failure (default 0.1)."),
                                "multiplier": ["type": "number", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.largestMultiplier),
                                               "description": "The delay grows this many times after each failure in a row (default 2)."],
                                "max_delay": described(timeout, "Seconds a restart waits at most (default 30)."),
                                "reset_after": described(window, "Seconds of healthy running after which the delay starts over (default 10)."),
                                "max_restarts": ["type": ["integer", "null"], "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.mostRestarts),
                                                 "description": "More restarts than this within `within` seconds mark the process failed (default 5; null: no limit)."],
                                "within": ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestWindow),
                                           "description": "The window of max_restarts, in seconds (default 60)."],
                            ],
                        ],
                    ],
                    "stop_timeout": described(timeout, "Seconds between the stop request (and SIGTERM) and SIGKILL (default 5)."),
                    "start_timeout": ["type": "number", "minimum": SettingsBounds.json(SettingsBounds.shortestPeriod), "maximum": SettingsBounds.json(SettingsBounds.longestTimeout),
                                      "description": "Seconds a worker has to report ready; later, it is killed as a failed start (default 30)."],
                    "watchdog": [
                        "description": "Seconds without a heartbeat before the worker is killed: 0.1 to 86400; 0 or null: no watchdog.",
                        "type": ["number", "null"], "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout),
                        "if": ["type": "number", "exclusiveMinimum": 0], "then": ["minimum": SettingsBounds.json(SettingsBounds.shortestPeriod)],
                    ],
                    "queue": [
                        "description": "Undelivered events kept for this process, and what happens when they reach the limit.",
                        "type": "object",
                        "additionalProperties": false,
                        "properties": [
                            "limit_bytes": [
                                "description": "Bytes of undelivered events; by default 16777216 (16 MB) with drop-oldest, 1048576 (1 MB) with block.",
                                "type": "integer", "minimum": 1024, "maximum": SettingsBounds.json(SettingsBounds.largestQueueBytes),
                            ],
                            "when_full": ["enum": ["drop-oldest", "block"], "default": "drop-oldest",
                                          "description": "drop-oldest: the oldest undelivered events give way (counted); block: the processes feeding this one are paused until it catches up."],
                        ],
                    ],
                ],
            ],
            "restartPolicy": ["enum": ["always", "on-failure", "never"]],
        ],
    ]

    /// Compiled once.
    public static let validator: JSONSchemaValidator = {
        do {
            return try JSONSchemaValidator(schema: document)
        } catch {
            fatalError("the host schema does not compile: \(error)")
        }
    }()
}
