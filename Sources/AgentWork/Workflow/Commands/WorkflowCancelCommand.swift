import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_cancel`: cancels an unfinished workflow run.
package enum WorkflowCancelCommand: @preconcurrency AgentCommand {
    package static let name = "workflow_cancel"
    package static let summary = "Cancels a workflow run: its going task runs are cancelled, its waits and approvals end."
    package static let routes: [CommandRoute] = [.post("/api/workflow-runs/{id}/cancel")]
    package static let mutating = true
    package static var requestSchema: JSONValue { WorkflowCommands.runRequest }
    /// The run as `workflow_show` answers it (its type's; a cancel leaves out the steps).
    package static var answerSchema: JSONValue { WorkflowCommands.showAnswer }
    package static var examples: [(request: JSONValue, answer: WorkflowShowAnswer)] {
        [(["id": "w1"], WorkflowShowAnswer(json: WorkflowCommands.exampleRun))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: WorkflowRunReference, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<WorkflowShowAnswer, CommandError>) -> Void) {
        host.cancelRun(request.id, by: caller, respond: respond)
    }
}
