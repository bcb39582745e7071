/// The request of the commands on one schedule (`schedule_pause`, `schedule_resume`, `schedule_run`).
package struct ScheduleReference: Codable, Sendable {
    /// The schedule's name in the settings.
    package var name: String

    package init(name: String) { self.name = name }
}
