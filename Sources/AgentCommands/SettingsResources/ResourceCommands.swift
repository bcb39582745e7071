import AgentBase
import JSONSchema

/// Which resource a generic resource command serves (``ResourceGetCommand``,
/// ``ResourceCreateCommand``, …): one type per resource, so that each command is a type of its
/// own in the registry.
package protocol SettingsResourceKind: Sendable {
    static var resource: SettingsResource { get }
}

package enum TaskResource: SettingsResourceKind {
    package static var resource: SettingsResource { .task }
}

package enum ScheduleResource: SettingsResourceKind {
    package static var resource: SettingsResource { .schedule }
}

package enum ExecutorResource: SettingsResourceKind {
    package static var resource: SettingsResource { .executor }
}

package typealias TaskGetCommand = ResourceGetCommand<TaskResource>
package typealias TaskCreateCommand = ResourceCreateCommand<TaskResource>
package typealias TaskUpdateCommand = ResourceUpdateCommand<TaskResource>
package typealias TaskDeleteCommand = ResourceDeleteCommand<TaskResource>
package typealias ScheduleGetCommand = ResourceGetCommand<ScheduleResource>
package typealias ScheduleCreateCommand = ResourceCreateCommand<ScheduleResource>
package typealias ScheduleUpdateCommand = ResourceUpdateCommand<ScheduleResource>
package typealias ScheduleDeleteCommand = ResourceDeleteCommand<ScheduleResource>
package typealias ExecutorGetCommand = ResourceGetCommand<ExecutorResource>
package typealias ExecutorCreateCommand = ResourceCreateCommand<ExecutorResource>
package typealias ExecutorUpdateCommand = ResourceUpdateCommand<ExecutorResource>
package typealias ExecutorDeleteCommand = ResourceDeleteCommand<ExecutorResource>

/// The resource commands: tasks, schedules and executors created, read, replaced and deleted
/// one at a time (`POST /api/tasks`, `GET|PUT|DELETE /api/tasks/{name}`, the same for
/// `/api/schedules` and `/api/executors`), as the workflow definitions are — each change the
/// `settings_change` it stands for (`add_task`, `set_schedule`, `remove_executor`, …).
package enum ResourceCommands {
    package static let all: [any AgentCommand.Type] = [
        TaskGetCommand.self, TaskCreateCommand.self, TaskUpdateCommand.self, TaskDeleteCommand.self,
        ScheduleGetCommand.self, ScheduleCreateCommand.self, ScheduleUpdateCommand.self, ScheduleDeleteCommand.self,
        ExecutorGetCommand.self, ExecutorCreateCommand.self, ExecutorUpdateCommand.self, ExecutorDeleteCommand.self,
    ]

    /// The refusal when the agent was not started from a settings file.
    static func unavailable(_ resource: SettingsResource) -> CommandError {
        .unavailable("this agent was not started from a settings file: its \(resource.plural) cannot be read or changed here")
    }

    static func name(_ resource: SettingsResource) -> JSONValue {
        ["type": "string", "minLength": 1, "description": .string("The \(resource.rawValue)'s name in the settings (under \"\(resource.collection)\").")]
    }

    static let ifMatch: JSONValue = [
        "type": "string",
        "description": "The settings file's hash (the resource's get or settings_get return it; over HTTP also the If-Match header): refused (412 precondition_failed) if the file changed since.",
    ]

    /// What the change commands of `resource` answer: `settings_change`'s answer and the name.
    static func changeAnswer(_ resource: SettingsResource) -> JSONValue {
        var schema = SettingsChangeCommand.answerSchema.objectValue ?? [:]
        var properties = schema["properties"]?.objectValue ?? [:]
        properties[resource.rawValue] = ["type": "string", "description": .string("The \(resource.rawValue)'s name.")]
        schema["properties"] = .object(properties)
        return .object(schema)
    }

    /// An answer for the examples of the agreement test.
    static func exampleChange(_ resource: SettingsResource, _ name: String) -> ResourceChangeAnswer {
        ResourceChangeAnswer(change: SettingsChangeCommand.Answer(path: "/srv/agent/settings.json", hash: "9c1e", applied: ReloadCommand.Answer(kept: ["feed"])),
                             resource: resource, name: name)
    }

    /// A name the examples use.
    package static func exampleName(_ resource: SettingsResource) -> String {
        switch resource {
        case .task: "backup"
        case .schedule: "nightly"
        case .executor: "crunchers"
        case .workflow: "support"
        }
    }
}
