import AgentBase
import AgentLoop
import JSONSchema

/// `workflow_approve` and `workflow_reject`: the same request, answer and access (a person's
/// action: any role may send it over HTTP, the step checks that the user is an approver).
package protocol WorkflowDecisionCommand: AgentCommand
where Request == WorkflowDecision, Answer == WorkflowStepAnswer, Host == WorkflowEngine {
    /// Approves (true) or rejects.
    static var approves: Bool { get }
}

extension WorkflowDecisionCommand {
    package static var mutating: Bool { true }
    package static var requiresAdmin: Bool { false }
    package static var requestSchema: JSONValue {
        CommandSchema.object([
            "id": WorkflowCommands.runID,
            "step": ["type": "string", "minLength": 1, "description": "The approval step's id."],
            "comment": ["type": "string", "maxLength": 4096],
        ], required: ["id", "step"])
    }
    package static var answerSchema: JSONValue {
        CommandSchema.object(["ok": ["const": true], "step": WorkflowCommands.stepSchema], required: ["ok", "step"])
    }
    package static var examples: [(request: JSONValue, answer: WorkflowStepAnswer)] {
        [(["id": "w1", "step": "ask"], WorkflowStepAnswer(step: WorkflowCommands.exampleStep)),
         (["id": "w1", "step": "ask", "comment": "fine by me"], WorkflowStepAnswer(step: WorkflowCommands.exampleStep))]
    }
    package static var unavailable: CommandError { WorkflowCommands.unavailable }

    @LoopActor package static func run(_ request: WorkflowDecision, on host: WorkflowEngine, caller: CommandCaller,
                           respond: @escaping (Result<WorkflowStepAnswer, CommandError>) -> Void) {
        host.decide(request, approve: approves, caller: caller, respond: respond)
    }
}
