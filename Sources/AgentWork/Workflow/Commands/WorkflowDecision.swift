/// The request of `workflow_approve` and `workflow_reject`: a waiting approval step of a run.
package struct WorkflowDecision: Codable, Sendable {
    /// The run's id.
    package var id: String
    /// The approval step's id.
    package var step: String
    /// Why (kept in the step log and the audit).
    package var comment: String?

    package init(id: String, step: String, comment: String? = nil) {
        self.id = id
        self.step = step
        self.comment = comment
    }
}
