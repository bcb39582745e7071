/// The request of the commands on one workflow run (`workflow_show`, `workflow_cancel`).
package struct WorkflowRunReference: Codable, Sendable {
    /// The run's id, as `workflow runs` shows it.
    package var id: String

    package init(id: String) { self.id = id }
}
