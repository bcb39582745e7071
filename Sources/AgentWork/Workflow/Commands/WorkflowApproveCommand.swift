import AgentBase

/// `workflow_approve`.
package enum WorkflowApproveCommand: @preconcurrency WorkflowDecisionCommand {
    package static let name = "workflow_approve"
    package static let summary = "Approves a waiting approval step (over HTTP: as one of its approvers, a user or role — any role may send it, the step checks who), with a comment; audited."
    package static let routes: [CommandRoute] = [.post("/api/workflow-runs/{id}/steps/{step}/approve")]
    package static let approves = true
}
