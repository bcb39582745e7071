/// The request of the commands on one run (`task_show`, `task_cancel`; `task_rerun` adds `wait`).
package struct TaskRunReference: Codable, Sendable {
    /// The run's id, as `task runs` shows it.
    package var id: String

    package init(id: String) { self.id = id }
}
