import AgentBase
import JSONSchema

/// `task_cancel`: Cancels a queued, retrying or running run (a running one's whole process tree is killed).
package enum TaskCancelCommand: AgentCommand {
    package typealias Request = TaskRunReference

    package static let name = "task_cancel"
    package static let summary = "Cancels a queued, retrying or running run (a running one's whole process tree is killed)."
    package static let routes: [CommandRoute] = [.post("/api/runs/{id}/cancel")]
    package static let mutating = true
    package static var requestSchema: JSONValue { TaskCommands.runRequest }
    package static var answerSchema: JSONValue { TaskCommands.runAnswer }
    package static var examples: [(request: JSONValue, answer: TaskRunAnswer)] {
        [(["id": "r1"], TaskRunAnswer(json: TaskCommands.exampleRun))]
    }
    package static var unavailable: CommandError { TaskCommands.unavailable }

    package static func run(_ request: TaskRunReference, on host: TaskCoordinator, caller: CommandCaller,
                           respond: @escaping (Result<TaskRunAnswer, CommandError>) -> Void) {
        host.cancelRun(request.id, respond: respond)
    }
}
