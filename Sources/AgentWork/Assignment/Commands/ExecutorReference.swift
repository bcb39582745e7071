/// The request of the commands on one executor (`executor_drain`, `executor_resume`).
package struct ExecutorReference: Codable, Sendable {
    /// The executor's name, as `executor list` shows it.
    package var name: String

    package init(name: String) { self.name = name }
}
