import AgentSupervision
import JSONSchema

/// One entry of the settings' `"tasks"`: what a task does and how its runs are treated.
///
/// ```json
/// "tasks": {"backup": {"type": "command", "command": ["/usr/bin/python3", "job.py"],
///                      "timeout": 600, "retries": {"max": 3, "initial_delay": 5},
///                      "max_concurrent": 1, "description": "Nightly backup"}}
/// ```
public struct TaskDefinition: Equatable, Sendable {
    /// The key in `"tasks"`.
    public var name: String
    /// `"command"`, or `"<module>.<task type>"` for a module task handler.
    public var type: String
    public var description: String
    /// Seconds an attempt may take before it is killed and counted `timed_out` (nil: no limit).
    public var timeout: Double?
    public var retries: RetryPolicy
    /// `"max_interruptions"`: how many times a run may be interrupted from outside the work
    /// (the agent stopped or died, its executor's worker died) and still run again; the next
    /// interruption ends it `abandoned`. Not counted against ``retries``.
    public var maxInterruptions = TaskDefinition.defaultMaxInterruptions
    /// How many runs of this task may run at once.
    public var maxConcurrent: Int
    /// The built-in `command` type: what to run.
    public var command: CommandSpec?
    /// A module task's settings (the handler's own, validated against its schema).
    public var settings: JSONValue
    /// The task's input schema (a module task's declared one, or `"input"` in the settings;
    /// nil: any JSON).
    public var inputSchema: JSONValue?
    /// `"notify"` as written (read by the notifications).
    public var notify: JSONValue?
    /// `"on_event"`: a run for every event of a type whose payload passes a schema.
    public var onEvent: EventTrigger?
    /// `"idle_timeout"`, module tasks: seconds the task's executor worker stays up without
    /// runs (nil: the runner's default, 60 s).
    public var idleTimeout: Double?
    /// `"cancel_grace"`: seconds a cancelled run has to end — a command's tree from SIGTERM to
    /// SIGKILL, a handler (cancelled or timed out) from its cancellation to its worker's kill
    /// (nil: the runner's default, 2 s for a command, 5 s for a handler).
    public var cancelGrace: Double?
    /// `"limits"`, command tasks: the memory and CPU each run may use (nil: none).
    public var limits: ResourceLimits?
    /// `"require"`: labels an executor must carry to take the task's runs (a subset match).
    public var require: [String: String] = [:]
    /// The schema of the output a person gives (`task complete`): `"output"`, or a module task
    /// type's declared one (nil: any JSON).
    public var outputSchema: JSONValue?

    /// `"max_interruptions"` when the settings do not say.
    public static let defaultMaxInterruptions = 10

    public init(name: String, type: String, description: String = "", timeout: Double? = nil,
                retries: RetryPolicy = RetryPolicy(), maxConcurrent: Int = 1, command: CommandSpec? = nil,
                settings: JSONValue = .object([:]), inputSchema: JSONValue? = nil, notify: JSONValue? = nil) {
        self.name = name
        self.type = type
        self.description = description
        self.timeout = timeout
        self.retries = retries
        self.maxConcurrent = maxConcurrent
        self.command = command
        self.settings = settings
        self.inputSchema = inputSchema
        self.notify = notify
    }

    /// `"on_event": {"type": "frequency_alert", "where": {…}}`: the event (type, source, time,
    /// payload) becomes the input of a run when its payload is valid against `where`.
    public struct EventTrigger: Equatable, Sendable {
        public var type: String
        /// A JSON Schema over the payload (nil: every event of the type).
        public var condition: JSONValue?

        public init(type: String, condition: JSONValue? = nil) {
            self.type = type
            self.condition = condition
        }
    }

    /// `"retries"`: how many more attempts a failed, timed-out or interrupted run gets, and
    /// the delay before each (`initial_delay × multiplier^(n-1)`, at most `max_delay`).
    public struct RetryPolicy: Equatable, Sendable {
        public var max: Int
        public var initialDelay: Double
        public var multiplier: Double
        public var maxDelay: Double

        public init(max: Int = 0, initialDelay: Double = 5, multiplier: Double = 2, maxDelay: Double = 300) {
            self.max = max
            self.initialDelay = initialDelay
            self.multiplier = multiplier
            self.maxDelay = maxDelay
        }
    }

    /// The `command` type: an external program in any language.
    public struct CommandSpec: Equatable, Sendable {
        /// The program and its arguments; with `shell`, one shell line in `arguments[0]`.
        public var arguments: [String]
        /// `"shell": true`: run `arguments[0]` with `/bin/sh -c`.
        public var shell: Bool
        /// The working directory (nil: the agent's folder).
        public var directory: String?
        /// Added to the runtime's environment, `${env:}` references resolved.
        public var environment: [String: String]

        public init(arguments: [String], shell: Bool = false, directory: String? = nil, environment: [String: String] = [:]) {
            self.arguments = arguments
            self.shell = shell
            self.directory = directory
            self.environment = environment
        }
    }
}
