/// The request of the commands on one run (`task_show`, `task_rerun`, `task_cancel`).
package struct TaskRunReference: Codable, Sendable {
    /// The run's id, as `task runs` shows it.
    package var id: String

    package init(id: String) { self.id = id }
}
