import AgentBase
import AgentCore
import AgentSupervision
import JSONSchema

/// The settings of executors — processes of the host type `"executor"` — and of the
/// `"assignment"` section (strategies, aging). An executor runs no worker of its own: it is a
/// capacity that runs are assigned to (``ExecutorPool``); the module task handlers it takes
/// run in workers started for it on demand (`<executor>:<task>`), its command tasks are
/// spawned by the supervisor and counted against it; a person's runs wait for `task complete`.
///
/// ```json
/// "processes": {"crunchers": {"type": "executor", "replicas": 2, "max_concurrent": 8,
///                             "tasks": {"word_count": {"priority_boost": 2, "max_concurrent": 2}, "backup": {}},
///                             "priority_preference": "high", "labels": {"gpu": "yes"}},
///               "alice": {"type": "executor", "user": "alice", "tasks": {"review": {}}}},
/// "assignment": {"strategy": "best_fit", "tasks": {"backup": "round_robin"}, "aging_interval": 60}
/// ```
package enum ExecutorSettings {
    /// The process type.
    package static let type = "executor"
    package static let mostConcurrent = TaskSettings.mostConcurrent
    package static let largestBoost = 1_000

    /// `{"gpu": "yes"}` as labels (members that are not strings are left out: the schema says so).
    package static func labels(_ value: JSONValue?) -> [String: String] {
        var labels: [String: String] = [:]
        for (key, item) in value?.objectValue ?? [:] { if let text = item.stringValue { labels[key] = text } }
        return labels
    }

    /// Labels as a JSON object, sorted by name.
    package static func json(_ labels: [String: String]) -> JSONValue {
        .object(JSONObject(labels.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) }))
    }

    /// The schema of an executor's keys (besides the host's: type, enabled, `replicas`… —
    /// the host schema checks those for every process, an executor's included).
    package static let schema: JSONValue = [
        "type": "object",
        "required": ["tasks"],
        "additionalProperties": false,
        "properties": [
            "tasks": [
                "description": "Task name (a \"tasks\" entry) → what this executor does for it.",
                "type": "object", "minProperties": 1,
                "additionalProperties": [
                    "type": "object", "additionalProperties": false,
                    "properties": [
                        "priority_boost": ["type": "integer", "minimum": .number(JSONNumber(-largestBoost)), "maximum": SettingsBounds.json(largestBoost), "default": 0,
                                           "description": "Added to the executor's score for this task (best_fit, priority_first)."],
                        "max_concurrent": ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(mostConcurrent),
                                           "description": "Runs of this task at once on this executor (default: its own max_concurrent)."],
                    ],
                ],
            ],
            "max_concurrent": ["type": "integer", "minimum": 1, "maximum": SettingsBounds.json(mostConcurrent), "default": 1,
                               "description": "Runs at once on this executor (each replica), whatever their task."],
            "priority_preference": ["enum": .array(TaskRun.Priority.allCases.map { .string($0.rawValue) }),
                                    "description": "The priority of the runs it prefers (best_fit, priority_first)."],
            "labels": ["type": "object", "additionalProperties": ["type": "string"],
                       "description": "Labels a task's or run's \"require\" is matched against."],
            "user": ["type": "string", "minLength": 1,
                     "description": "A person: a user of the \"http\" settings who carries out the runs assigned to this executor by hand (agent-control task complete)."],
            "role": ["enum": ["read", "admin"],
                     "description": "People by role: any user of the \"http\" settings with this role carries out the runs assigned to this executor by hand (not with \"user\")."],
            "description": ["type": "string"],
        ],
    ]

    package static let validator: JSONSchemaValidator = {
        do { return try JSONSchemaValidator(schema: schema) } catch { fatalError("the executor schema does not compile: \(error)") }
    }()

    /// The schema of `"assignment"` (part of ``HostSchema``).
    package static let assignmentSchema: JSONValue = [
        "description": "How queued runs are assigned to the executors (processes of type \"executor\").",
        "type": "object", "additionalProperties": false,
        "properties": [
            "strategy": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) }), "default": "best_fit",
                         "description": "The agent's strategy (agent-control task set-strategy changes it at run time; the change is kept in the store and wins over this)."],
            "tasks": ["type": "object", "additionalProperties": ["enum": .array(AssignmentStrategy.allCases.map { .string($0.rawValue) })],
                      "description": "Task name → its own strategy."],
            "aging_interval": ["type": "number", "exclusiveMinimum": 0, "maximum": SettingsBounds.json(SettingsBounds.longestWindow), "default": 60,
                               "description": "Seconds of waiting worth one priority step: a queued run is never overtaken by a run queued more than (that run's priority − its own) × this after it."],
        ],
    ]

    package static func readAssignment(_ json: JSONValue?) -> AssignmentSettings {
        var assignment = AssignmentSettings()
        if let name = json?["strategy"]?.stringValue, let strategy = AssignmentStrategy(rawValue: name) { assignment.strategy = strategy }
        for (task, value) in json?["tasks"]?.objectValue ?? [:] {
            if let strategy = value.stringValue.flatMap(AssignmentStrategy.init(rawValue:)) { assignment.tasks[task] = strategy }
        }
        if let interval = json?["aging_interval"]?.numberValue?.doubleValue, interval > 0, interval.isFinite { assignment.agingInterval = interval }
        return assignment
    }

    /// The executors of one `"executor"` process (one per replica), or its problems (pointers
    /// from the settings' root). `tasks`: the task names defined; `users`: the HTTP users and
    /// their roles.
    package static func read(_ process: ProcessSettings, tasks: Set<String>, users: [String: String]) -> (executors: [ExecutorDefinition], problems: [(pointer: String, message: String)]) {
        let settings = process.moduleSettings
        var problems = validator.validate(.object(settings)).map { (process.pointer + $0.instanceLocation, $0.message) }
        let entries = settings["tasks"]?.objectValue ?? [:]
        for name in entries.keys.sorted() where !tasks.contains(name) {
            let known = tasks.sorted()
            problems.append((process.pointer + "/tasks/" + JSONPointer.escape(name),
                             "unknown task \"\(name)\"\(Suggestions.hint(for: name, in: known)); an executor takes tasks defined under \"tasks\" (defined: \(known.isEmpty ? "none" : known.joined(separator: ", ")))"))
        }
        if let user = settings["user"]?.stringValue, users[user] == nil {
            let known = users.keys.sorted()
            problems.append((process.pointer + "/user", users.isEmpty
                ? "no HTTP user \"\(user)\": a person executor is a user of the \"http\" settings, which declare none (add \"http\": {\"users\": {\"\(user)\": …}})"
                : "no HTTP user \"\(user)\"\(Suggestions.hint(for: user, in: known)); users: \(known.joined(separator: ", "))"))
        }
        let role = settings["role"]?.stringValue
        if role != nil, settings["user"] != nil {
            problems.append((process.pointer + "/role", "an executor is one person (\"user\") or the people of a role (\"role\"), not both; remove one"))
        } else if let role, ["read", "admin"].contains(role), !users.values.contains(role) {
            problems.append((process.pointer + "/role", users.isEmpty
                ? "no HTTP user has the role \"\(role)\": the \"http\" settings declare no users (add \"http\": {\"users\": {NAME: {…, \"role\": \"\(role)\"}}})"
                : "no HTTP user has the role \"\(role)\" (users: \(users.sorted { $0.key < $1.key }.map { "\($0.key) (\($0.value))" }.joined(separator: ", "))); nobody could complete its runs"))
        }
        if let labels = settings["labels"]?.objectValue {
            for key in labels.keys.sorted() where key.isEmpty {
                problems.append((process.pointer + "/labels/", "a label's name must not be empty"))
            }
        }
        guard problems.isEmpty else { return ([], problems) }
        var capabilities: [String: ExecutorDefinition.Capability] = [:]
        for (name, value) in entries {
            capabilities[name] = ExecutorDefinition.Capability(priorityBoost: value["priority_boost"]?.numberValue?.intValue ?? 0,
                                                               maxConcurrent: value["max_concurrent"]?.numberValue?.intValue)
        }
        let labels = Self.labels(settings["labels"])
        // `replicas` is a host key, read (and checked) like any process's: `name#1 … name#N`.
        let names = process.replicas.map { count in (1...max(count, 1)).map { "\(process.name)#\($0)" } } ?? [process.name]
        let executors = names.map { name in
            ExecutorDefinition(name: name, process: process.name, tasks: capabilities,
                               maxConcurrent: settings["max_concurrent"]?.numberValue?.intValue ?? 1,
                               priorityPreference: settings["priority_preference"]?.stringValue.flatMap(TaskRun.Priority.init(rawValue:)),
                               labels: labels, user: settings["user"]?.stringValue, role: role,
                               people: role.map { role in users.filter { $0.value == role }.keys.sorted() })
        }
        return (executors, [])
    }

    /// Problems across executors and tasks: a task whose `require` no executor taking it
    /// carries, a strategy named for a task that does not exist.
    /// `definedTasks`: every name under `"tasks"`, valid or not (an invalid one's error is its own).
    package static func crossCheck(_ executors: [ExecutorDefinition], tasks: [TaskDefinition], definedTasks: Set<String>? = nil,
                                   assignment: JSONValue?) -> [(pointer: String, message: String)] {
        var problems: [(pointer: String, message: String)] = []
        for task in tasks where !task.require.isEmpty {
            let takers = executors.filter { $0.tasks[task.name] != nil }
            guard !takers.isEmpty else {
                problems.append(("/tasks/" + JSONPointer.escape(task.name) + "/require",
                                 "task \"\(task.name)\" requires labels but no executor takes it; declare a process of type \"executor\" with \"tasks\": {\"\(task.name)\": {}} and these labels"))
                continue
            }
            if !takers.contains(where: { executor in task.require.allSatisfy { executor.labels[$0.key] == $0.value } }) {
                let wanted = task.require.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: ", ")
                problems.append(("/tasks/" + JSONPointer.escape(task.name) + "/require",
                                 "no executor taking task \"\(task.name)\" carries every required label (\(wanted)); executors taking it: \(Set(takers.map(\.process)).sorted().joined(separator: ", "))"))
            }
        }
        let names = definedTasks ?? Set(tasks.map(\.name))
        for name in (assignment?["tasks"]?.objectValue ?? [:]).keys.sorted() where !names.contains(name) {
            problems.append(("/assignment/tasks/" + JSONPointer.escape(name), "unknown task \"\(name)\"\(Suggestions.hint(for: name, in: names.sorted())); a strategy is chosen for a task defined under \"tasks\""))
        }
        return problems
    }
}
