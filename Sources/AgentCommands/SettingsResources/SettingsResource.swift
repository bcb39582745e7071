import AgentBase
import JSONSchema

/// A kind of thing the settings define by name — a task, a schedule, an executor, a workflow —
/// which the resource commands (`task_create`, `PUT /api/schedules/{name}`, …) and
/// `settings_change`'s actions (`add_task`, `set_schedule`, `remove_executor`, …) create, read,
/// replace and delete one at a time, each through the settings path.
package enum SettingsResource: String, Sendable, CaseIterable {
    case task, schedule, executor, workflow

    /// What a change does to one.
    package enum Verb: String, Sendable {
        case add, set, remove
    }

    /// The settings' top-level member that holds them by name (an executor is a process of
    /// type `"executor"`).
    package var collection: String {
        switch self {
        case .task: "tasks"
        case .schedule: "schedules"
        case .executor: "processes"
        case .workflow: "workflows"
        }
    }

    /// `tasks`, `executors`: the routes' and the messages' plural.
    package var plural: String { rawValue + "s" }

    /// Where one is in the settings: `/tasks/backup`.
    package func pointer(_ name: String) -> String { "/" + collection + "/" + JSONPointer.escape(name) }

    /// The `type` an executor's process has (and its definition may leave out).
    package static let executorType = "executor"

    /// Whether `value`, the member `name` of ``collection``, is one of these: any member of
    /// `tasks`, but only a process of type `"executor"` is an executor.
    package func holds(_ value: JSONValue) -> Bool {
        self != .executor || value["type"]?.stringValue == Self.executorType
    }

    /// What its definition is, for the commands' schemas and help.
    package var definitionSummary: String {
        switch self {
        case .task: "The task's definition, as under \"tasks\" in the settings: {\"type\": \"command\", \"command\": […], \"timeout\"?, \"retries\"?, \"input\"?, \"on_event\"?, …}."
        case .schedule: "The schedule's definition, as under \"schedules\" in the settings: one of \"cron\", \"every\", \"at\", and \"run\": {\"task\" or \"workflow\", \"input\"?}, …"
        case .executor: "The executor's settings, as a process of type \"executor\" under \"processes\": {\"tasks\": {…}, \"max_concurrent\"?, \"labels\"?, \"replicas\"?, …}; \"type\": \"executor\" may be left out."
        case .workflow: "The workflow's definition: {\"input\"?, \"on_event\"?, \"steps\": [...]}."
        }
    }

    /// An example definition (help, the commands' examples).
    package var example: JSONObject {
        switch self {
        case .task: ["type": "command", "command": ["/usr/local/bin/backup", "--full"], "timeout": 600]
        case .schedule: ["cron": "0 3 * * *", "run": ["task": "backup"]]
        case .executor: ["type": "executor", "max_concurrent": 2, "tasks": ["backup": [:]]]
        case .workflow: ["steps": [["id": "classify", "task": "classify"]]]
        }
    }

    /// `pointer`, into the settings, as a pointer into a request whose `definition` is the
    /// definition of `name`: `/tasks/backup/retries/max` → `/definition/retries/max`; a
    /// problem elsewhere in the settings the definition made (a schedule's input the new task's
    /// schema refuses) is the definition's as a whole.
    package func requestPointer(of pointer: String, name: String) -> String {
        let own = self.pointer(name)
        if pointer == own { return "/definition" }
        return pointer.hasPrefix(own + "/") ? "/definition" + pointer.dropFirst(own.count) : "/definition"
    }

    /// A refusal of the settings change a resource command stands for, with the request's own
    /// pointer: an invalid definition's first problem (`/definition/retries/max`, beside the
    /// settings file's pointers in `errors`), a `settings` member as the request's `definition`;
    /// a removal refused because something still names it points at the name.
    package func pointed(_ refusal: CommandError, name: String, verb: Verb) -> CommandError {
        var pointed = refusal
        if let pointer = refusal.pointer, pointer == "/settings" || pointer.hasPrefix("/settings/") {
            pointed.pointer = "/definition" + pointer.dropFirst("/settings".count)
            return pointed
        }
        guard refusal.pointer == nil, refusal.code == .invalid || (refusal.code == .conflict && verb == .remove) else { return refusal }
        if verb == .remove {
            pointed.pointer = "/name"
            return pointed
        }
        // Problems of the definition itself first: the request's pointer is the first of them.
        let pointers = refusal.errors?.compactMap { $0["pointer"]?.stringValue } ?? []
        let own = pointers.first { $0 == self.pointer(name) || $0.hasPrefix(self.pointer(name) + "/") } ?? pointers.first ?? ""
        pointed.pointer = requestPointer(of: own, name: name)
        return pointed
    }
}
