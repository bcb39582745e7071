import AgentBase

/// `workflow_reject`.
package enum WorkflowRejectCommand: @preconcurrency WorkflowDecisionCommand {
    package static let name = "workflow_reject"
    package static let summary = "Rejects a waiting approval step (the run fails with the comment); over HTTP as one of its approvers (any role may send it, the step checks who); audited."
    package static let routes: [CommandRoute] = [.post("/api/workflow-runs/{id}/steps/{step}/reject")]
    package static let approves = false
}
