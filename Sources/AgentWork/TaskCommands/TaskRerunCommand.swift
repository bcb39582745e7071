import AgentBase
import JSONSchema

/// `task_rerun`: Queues a new run of a run's task with the same input and priority.
package enum TaskRerunCommand: AgentCommand {
    package typealias Request = TaskRunReference

    package static let name = "task_rerun"
    package static let summary = "Queues a new run of a run's task with the same input and priority."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/rerun")]
    package static let mutating = true
    package static var requestSchema: JSONValue { TaskCommands.runRequest }
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1"], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.rerunRun(request.id, respond: respond)
    }
}
