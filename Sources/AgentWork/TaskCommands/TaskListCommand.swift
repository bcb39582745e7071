import AgentBase
import AgentLoop
import JSONSchema

/// `task_list`: the tasks the settings define, with their queued and running runs.
package enum TaskListCommand: @preconcurrency AgentCommand {
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var tasks: [JSONValue]
    }

    package static let name = "task_list"
    package static let summary = "The tasks the settings define, with their queued and running runs."
    package static let routes: [CommandRoute] = [.get("/api/tasks")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "tasks": ["type": "array", "items": CommandSchema.object([
            "name": ["type": "string"], "type": ["type": "string"], "description": ["type": "string"],
            "timeout": ["type": "number"], "max_concurrent": ["type": "integer"], "retries": ["type": "object"],
            "max_interruptions": ["type": "integer", "minimum": 0],
            "command": ["type": "array", "items": ["type": "string"]], "shell": ["type": "boolean"],
            "on_event": ["type": "string"], "input": [:], "queued": ["type": "integer"], "running": ["type": "integer"],
        ], required: ["name", "type"], open: true)],
    ], required: ["ok", "tasks"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(tasks: [["name": "report", "type": "command", "queued": 0, "running": 1]]))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    @LoopActor package static func run(_ request: NoFields, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(.success(Answer(tasks: host.taskList())))
    }
}
