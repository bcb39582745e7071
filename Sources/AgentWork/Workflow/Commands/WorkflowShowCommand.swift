import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_show`: one workflow run with its step log.
package enum WorkflowShowCommand: @preconcurrency AgentCommand {
    package static let name = "workflow_show"
    package static let summary = "One workflow run with its step log: each step's status, attempt, duration, output and error, in the order they started."
    package static let routes: [CommandRoute] = [.get("/api/workflow-runs/{id}")]
    package static let mutating = false
    package static var requestSchema: JSONValue { WorkflowCommands.runRequest }
    package static var answerSchema: JSONValue { WorkflowCommands.showAnswer }
    package static var examples: [(request: JSONValue, answer: WorkflowShowAnswer)] {
        [(["id": "w1"], WorkflowShowAnswer(json: WorkflowCommands.exampleRun, steps: [WorkflowCommands.exampleStep]))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: WorkflowRunReference, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        host.showRun(request.id, respond: respond)
    }
}
