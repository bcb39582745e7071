import AgentBase
import AgentLoop
import JSONSchema

/// `task_run`: queues a run of a task, now or at a time; with `wait`, answers when it ends.
package enum TaskRunCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var name: String
        /// Checked against the task's input schema; default `{}`.
        package private(set) var input: JSONValue?
        package var priority: TaskRun.Priority?
        /// An ISO 8601 time or a delay from now (`30s`, `10m`, `2h`, `1d`).
        package var at: String?
        package var wait: Bool?
        /// Labels the run's executor must carry, besides the task's.
        package var require: [String: String]?
        /// ``input`` as compact JSON text, made where the request is decoded (off the loop),
        /// for the run (``TaskRun/inputText``).
        package private(set) var inputText: [UInt8]?
        /// What ``input``'s nesting check found, made where the request is decoded (off the loop:
        /// a MiB of values walked held it about half of a 1 MiB request's time).
        package private(set) var nestingProblem: (pointer: String, message: String)?

        enum CodingKeys: String, CodingKey {
            case name, input, priority, at, wait, require
        }

        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            name = try container.decode(String.self, forKey: .name)
            input = try container.decodeIfPresent(JSONValue.self, forKey: .input)
            priority = try container.decodeIfPresent(TaskRun.Priority.self, forKey: .priority)
            at = try container.decodeIfPresent(String.self, forKey: .at)
            wait = try container.decodeIfPresent(Bool.self, forKey: .wait)
            require = try container.decodeIfPresent([String: String].self, forKey: .require)
            // Not past the bound: an input the check refuses is not written whole for nothing.
            inputText = input.flatMap { $0.serializedLength(atMost: InputSize.largest) == nil ? nil : $0.serializedBytes() }
            nestingProblem = input.flatMap { InputNesting.problem($0) }
        }

        package init(name: String, input: JSONValue? = nil, priority: TaskRun.Priority? = nil, at: String? = nil, wait: Bool? = nil,
                    require: [String: String]? = nil) {
            self.name = name
            self.input = input
            self.priority = priority
            self.at = at
            self.wait = wait
            self.require = require
            nestingProblem = input.flatMap { InputNesting.problem($0) }
        }
    }

    package static let name = "task_run"
    package static let summary = "Queues a run of a task (now, or `at` a time) with an input valid against the task's input schema; with `wait`, answers when it has finished."
    package static let routes: [CommandRoute] = [.post("/api/tasks/{name}/run")]
    package static let mutating = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": ["type": "string", "minLength": 1, "description": "The task's name in the settings."],
        "input": ["description": "The run's input (JSON; default {}; at most 1 MiB as JSON text), checked against the task's input schema."],
        "priority": ["enum": .array(TaskRun.Priority.allCases.map { .string($0.rawValue) }), "default": "normal"],
        "at": ["type": "string", "description": "Not before this time: ISO 8601 (2026-11-24T07:00:00Z), or a delay from now (30s, 10m, 2h, 1d)."],
        "wait": ["type": "boolean", "default": false, "description": "Answer when the run has finished (succeeded, failed, timed_out, cancelled or abandoned)."],
        "require": ["type": "object", "additionalProperties": ["type": "string"], "description": "Labels the run's executor must carry, besides the task's."],
    ], required: ["name"])
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["name": "report"], TaskRunAnswer(json: TaskCommands.exampleRun)),
         (["name": "report", "input": ["day": 3], "priority": "high", "at": "10m", "wait": true, "require": ["gpu": "yes"]],
          TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.runTask(request, origin: caller.front == "control" ? .cli : .http, respond: respond)
    }
}

extension TaskRunCommand.Request: SelfCheckingRequest {
    /// An input over ``InputSize/largest`` (off the loop: see ``SelfCheckingRequest``).
    package func problem() -> CommandError? { inputText == nil ? InputSize.problem(input) : nil }
}
