import AgentBase
import AgentCore
import AgentSupervision
import Foundation
import JSONSchema

/// The settings' `"tasks"`: name → ``TaskDefinition``.
///
/// ```json
/// "tasks": {"backup": {"type": "command", "command": ["/usr/bin/python3", "job.py"], "timeout": 600,
///                      "retries": {"max": 3, "initial_delay": 5, "multiplier": 2, "max_delay": 300},
///                      "max_concurrent": 1, "description": "Nightly backup"}}
/// ```
///
/// The host schema checks the shapes; ``read(_:environment:)`` what a schema cannot say (a
/// command's form, `${env:}` references, the input schema compiling). Module task types are
/// checked against the modules' manifests by the ``SettingsValidator``.
package enum TaskSettings {
    /// Seconds an attempt may take at most: a week.
    package static let longestTimeout = SettingsBounds.longestWindow
    /// Retries of one run, and runs of one task at once.
    package static let mostRetries = 1_000_000
    package static let mostConcurrent = 100_000
    /// Interruptions a run may outlive.
    package static let mostInterruptions = 1_000_000

    /// The schema of `"tasks"` (part of ``HostSchema``).
    package static let schema: JSONValue = [
        "description": "Tasks: work that runs to completion, now (agent-control task run, POST /api/tasks/{name}/run), at a time, or on an event. Name → definition.",
        "type": "object",
        "additionalProperties": [
            "type": "object",
            "required": ["type"],
            "additionalProperties": false,
            "properties": [
                "type": ["type": "string", "minLength": 1, "description": "\"command\" (an external program), or \"<module>.<task type>\" for a module's task handler."],
                "description": ["type": "string", "description": "What the task does, for people (shown by task list and the dashboard)."],
                "command": ["type": ["array", "string"], "items": ["type": "string"],
                            "description": "The command type: the program and its arguments ([\"/usr/bin/python3\", \"job.py\", \"{{input.path}}\"]), or one shell line with \"shell\": true. {{input}} and {{input.FIELD.INNER}} are replaced by the run's input or a field of it (a string as it is, other values as JSON; single-quoted in a shell line); a missing field fails the run."],
                "shell": ["type": "boolean", "default": false, "description": "Run \"command\" (one string) with /bin/sh -c. A {{input…}} reference there must be a word of its own, outside quotes; or read the input's fields as \"$INPUT_FIELD\"."],
                "cwd": ["type": "string", "minLength": 1, "description": "The working directory, relative to the agent's folder (default: the agent's folder)."],
                "env": ["type": "object", "additionalProperties": ["type": "string"],
                        "description": "Environment variables added for the command; ${env:NAME} takes a value from the agent's environment (never shown)."],
                "timeout": ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(longestTimeout),
                            "description": "Seconds an attempt may take before its whole process tree is killed (timed_out). Default: no limit."],
                "retries": [
                    "description": "More attempts for a run that failed or timed out (an interrupted attempt is not counted here: see max_interruptions): the n-th waits initial_delay × multiplier^(n-1) seconds, at most max_delay.",
                    "type": "object", "additionalProperties": false,
                    "properties": [
                        "max": ["type": "integer", "minimum": 0, "maximum": SettingsBounds.json(mostRetries), "default": 0,
                                "description": "Attempts after the first at most."],
                        "initial_delay": ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 5,
                                          "description": "Seconds before the first retry."],
                        "multiplier": ["type": "number", "minimum": 1, "maximum": SettingsBounds.json(SettingsBounds.largestMultiplier), "default": 2,
                                       "description": "Each retry waits this many times longer than the one before."],
                        "max_delay": ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout), "default": 300,
                                      "description": "Seconds a retry waits at most."],
                    ],
                ],
                "max_interruptions": ["type": "integer", "minimum": 0, "maximum": SettingsBounds.json(mostInterruptions),
                                      "default": .number(JSONNumber(TaskDefinition.defaultMaxInterruptions)),
                                      "description": "How many times a run may be interrupted from outside its work — the agent stopped or was killed, its executor's worker died — and still run again (at once, at the next start); the next interruption ends it \"abandoned\". Interrupted attempts do not count against \"retries\"."],
                "max_concurrent": ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(mostConcurrent), "default": 1,
                                   "description": "Runs of this task at once; more wait in the queue."],
                "idle_timeout": ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(longestTimeout), "default": 60,
                                 "description": "Module tasks: seconds the task's executor worker stays up without runs before it is stopped (started again by the next run)."],
                "cancel_grace": ["type": "number", "minimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestTimeout),
                                 "description": "Seconds a cancelled run has to end: a command's process tree from SIGTERM to SIGKILL (default 2; a timeout kills at once), a module handler — cancelled or timed out — from its cancellation until its executor worker is killed (default 5). The agent's stop gives running runs the same grace."],
                "limits": ResourceLimits.schema,
                "input": ["type": ["object", "boolean"], "description": "A JSON Schema the input of a run must pass (refused at the request otherwise)."],
                "output": ["type": ["object", "boolean"], "description": "A JSON Schema the output a person gives (task complete) must pass (default: a module task type's declared output schema)."],
                "settings": ["type": "object", "description": "A module task's own settings (checked against its type's schema)."],
                "require": ["type": "object", "additionalProperties": ["type": "string"],
                            "description": "Labels an executor must carry to take the task's runs (every one, same value; processes of type \"executor\")."],
                "notify": TaskNotifier.notifySchema,
                "on_event": [
                    "description": "Run the task, with the event as input, for every event of `type` whose payload passes the JSON Schema `where`.",
                    "type": "object", "required": ["type"], "additionalProperties": false,
                    "properties": [
                        "type": ["type": "string", "minLength": 1, "description": "The event type that runs the task."],
                        "where": ["type": ["object", "boolean"], "description": "A JSON Schema over the event's payload (default: every event of the type)."],
                        "cycle": ["enum": ["intended"], "description": "Lets a trigger cycle through this on_event (tasks and workflows that start one another, refused otherwise): say so when a `where` ends it."],
                    ],
                ],
            ],
        ],
    ]

    /// The definitions in `json` (already checked by the host schema; entries the schema
    /// refused are skipped), and the problems the schema cannot see.
    package static func read(_ json: JSONValue?, environment: [String: String]) -> (tasks: [TaskDefinition], issues: [(pointer: String, message: String)]) {
        var tasks: [TaskDefinition] = []
        var issues: [(pointer: String, message: String)] = []
        for (name, value) in (json?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
            let pointer = "/tasks/" + JSONPointer.escape(name)
            var problems: [(pointer: String, message: String)] = []
            if let problem = PlainName.problem(name, what: "task name") { problems.append((pointer, problem)) }
            guard let object = value.objectValue, let type = object["type"]?.stringValue else { continue }
            var task = TaskDefinition(name: name, type: type, description: object["description"]?.stringValue ?? "")
            if let seconds = object["timeout"]?.numberValue?.doubleValue, seconds.isFinite {
                task.timeout = min(max(seconds, 0), longestTimeout)
            }
            task.retries = retries(object["retries"])
            if let count = object["max_interruptions"]?.numberValue {
                task.maxInterruptions = min(max(count.intValue ?? Int(saturating: count.doubleValue), 0), mostInterruptions)
            }
            if let count = object["max_concurrent"]?.numberValue {
                task.maxConcurrent = min(max(count.intValue ?? Int(saturating: count.doubleValue), 1), mostConcurrent)
            }
            if let seconds = object["idle_timeout"]?.numberValue?.doubleValue, seconds.isFinite {
                task.idleTimeout = min(max(seconds, 0.001), longestTimeout)
            }
            if let seconds = object["cancel_grace"]?.numberValue?.doubleValue, seconds.isFinite {
                task.cancelGrace = min(max(seconds, 0), SettingsBounds.longestTimeout)
            }
            task.settings = object["settings"] ?? .object([:])
            task.require = ExecutorSettings.labels(object["require"])
            task.notify = object["notify"]
            if let input = object["input"] {
                if let problem = schemaProblem(input) {
                    problems.append((pointer + "/input", "the input schema does not compile: \(problem); write a JSON Schema (draft 2020-12), e.g. {\"type\": \"object\", \"properties\": {…}}"))
                }
                task.inputSchema = input
            }
            if let output = object["output"] {
                if let problem = schemaProblem(output) {
                    problems.append((pointer + "/output", "the output schema does not compile: \(problem); write a JSON Schema (draft 2020-12)"))
                }
                task.outputSchema = output
            }
            if let trigger = object["on_event"]?.objectValue, let eventType = trigger["type"]?.stringValue {
                if let condition = trigger["where"], let problem = schemaProblem(condition) {
                    problems.append((pointer + "/on_event/where", "the condition does not compile: \(problem); write a JSON Schema over the event's payload"))
                }
                task.onEvent = TaskDefinition.EventTrigger(type: eventType, condition: trigger["where"])
            }
            if type == "command" {
                task.command = command(object, pointer: pointer, environment: environment, problems: &problems)
                let (limits, limitProblems) = ResourceLimits.read(object["limits"], pointer: pointer + "/limits")
                task.limits = limits
                problems += limitProblems
                if object["idle_timeout"] != nil {
                    problems.append((pointer + "/idle_timeout", "\"idle_timeout\" is for module tasks, whose executor worker stays up between runs; a command starts afresh for every run"))
                }
                if let spec = task.command {
                    problems += inputReferenceProblems(spec, isString: object["command"]?.stringValue != nil, inputSchema: task.inputSchema,
                                                       pointer: pointer + "/command")
                }
            } else {
                if object["limits"] != nil {
                    problems.append((pointer + "/limits", "\"limits\" is for tasks of type \"command\", each run of which has a cgroup of its own; a module task (\"\(type)\") runs in its executor's worker"))
                }
                for key in ["command", "shell", "cwd", "env"] where object[key] != nil {
                    problems.append((pointer + "/" + key, "\"\(key)\" is for tasks of type \"command\"; a module task (\"\(type)\") takes its own \"settings\""))
                }
                if !type.contains(".") {
                    problems.append((pointer + "/type", "unknown task type \"\(type)\"\(Suggestions.hint(for: type, in: ["command"])); expected \"command\" or \"<module>.<task type>\" (a task handler of an enabled module)"))
                }
            }
            issues += problems
            if problems.isEmpty { tasks.append(task) }
        }
        return (tasks, issues)
    }

    package static func retries(_ value: JSONValue?) -> TaskDefinition.RetryPolicy {
        var policy = TaskDefinition.RetryPolicy()
        guard let object = value?.objectValue else { return policy }
        func seconds(_ key: String, upTo longest: Double) -> Double? {
            guard let number = object[key]?.numberValue?.doubleValue, number.isFinite else { return nil }
            return min(max(number, 0), longest)
        }
        if let count = object["max"]?.numberValue {
            policy.max = min(max(count.intValue ?? Int(saturating: count.doubleValue), 0), mostRetries)
        }
        policy.initialDelay = seconds("initial_delay", upTo: SettingsBounds.longestTimeout) ?? policy.initialDelay
        policy.multiplier = max(1, seconds("multiplier", upTo: SettingsBounds.largestMultiplier) ?? policy.multiplier)
        policy.maxDelay = seconds("max_delay", upTo: SettingsBounds.longestTimeout) ?? policy.maxDelay
        return policy
    }

    /// `"command"`, `"shell"`, `"cwd"`, `"env"` of a command task.
    package static func command(_ object: JSONObject, pointer: String, environment: [String: String],
                        problems: inout [(pointer: String, message: String)]) -> TaskDefinition.CommandSpec? {
        let shell = object["shell"]?.boolValue ?? false
        var arguments: [String] = []
        switch object["command"] {
        case nil:
            problems.append((pointer, "a task of type \"command\" needs \"command\": the program and its arguments, e.g. [\"/usr/bin/python3\", \"job.py\"] (or one shell line with \"shell\": true)"))
        case .string(let line)?:
            if !shell {
                problems.append((pointer + "/command", "expected an array of strings (the program and its arguments, e.g. [\"/bin/echo\", \"hello\"]), found a string; to run a shell line, add \"shell\": true"))
            } else if line.trimmingCharacters(in: .whitespaces).isEmpty {
                problems.append((pointer + "/command", "expected a shell line, found an empty string"))
            }
            arguments = [line]
        case .array(let items)?:
            arguments = items.compactMap(\.stringValue)
            if items.isEmpty {
                problems.append((pointer + "/command", "expected the program and its arguments, found an empty array; e.g. [\"/bin/echo\", \"hello\"]"))
            } else if arguments.count == items.count, arguments[0].isEmpty {
                problems.append((pointer + "/command/0", "expected the program to run, found an empty string"))
            } else if shell, items.count != 1 {
                problems.append((pointer + "/command", "with \"shell\": true, \"command\" is one shell line (a string), found an array of \(items.count) items; drop \"shell\" to run a program with arguments"))
            }
        default:
            break // the host schema said what it found
        }
        // A C string ends at its first NUL: "/bin/tr\u0000ue" ran /bin/tr, an argument or a
        // variable was cut short without a word.
        let nul = "contains a NUL character (\\u0000), where the program would see the text end; remove it"
        for (index, argument) in arguments.enumerated() where argument.utf8.contains(0) {
            problems.append((pointer + (object["command"]?.stringValue != nil ? "/command" : "/command/\(index)"), "the argument \(nul)"))
        }
        if let directory = object["cwd"]?.stringValue, directory.utf8.contains(0) { problems.append((pointer + "/cwd", "the folder \(nul)")) }
        var variables: [String: String] = [:]
        for (key, value) in object["env"]?.objectValue ?? [:] {
            let at = pointer + "/env/" + JSONPointer.escape(key)
            if key.isEmpty || key.utf8.contains(0) || key.contains("=") {
                problems.append((at, "an environment variable's name is not empty and has no \"=\" nor NUL; found \(Describe.value(.string(key)))"))
                continue
            }
            if value.stringValue?.utf8.contains(0) == true {
                problems.append((at, "the value \(nul)"))
                continue
            }
            guard let text = value.stringValue else { continue }
            do throws(EnvironmentReferences.Failure) {
                variables[key] = try EnvironmentReferences.resolve(text, environment: environment)
            } catch {
                problems.append((pointer + "/env/" + JSONPointer.escape(key), error.message))
            }
        }
        return TaskDefinition.CommandSpec(arguments: arguments, shell: shell, directory: object["cwd"]?.stringValue, environment: variables)
    }

    /// `{{input…}}` references that are malformed, name a field the task's input schema does
    /// not declare, or stand where a shell would read their value as code, at their argument's
    /// pointer.
    package static func inputReferenceProblems(_ spec: TaskDefinition.CommandSpec, isString: Bool, inputSchema: JSONValue?,
                                       pointer: String) -> [(pointer: String, message: String)] {
        var problems: [(pointer: String, message: String)] = []
        for (index, argument) in spec.arguments.enumerated() {
            let at = isString ? pointer : pointer + "/\(index)"
            let (references, malformed) = InputReferences.references(in: argument)
            problems += malformed.map { (at, $0) }
            guard let inputSchema else { continue }
            for reference in references {
                if let problem = InputReferences.undeclared(reference, in: inputSchema) { problems.append((at, problem)) }
            }
        }
        // A shell line (its own, or the script of a shell the task runs) takes references only as words.
        problems += ShellPlacement.problems(of: spec).map { (isString ? pointer : pointer + "/\($0.index)", $0.message) }
        return problems
    }

    /// Why `schema` does not compile, or nil.
    package static func schemaProblem(_ schema: JSONValue) -> String? {
        do {
            _ = try JSONSchemaValidator(schema: schema)
            return nil
        } catch {
            return "\(error)"
        }
    }
}
