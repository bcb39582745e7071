import AgentBase
import JSONSchema

/// The answer of `schedule_pause` and `schedule_resume`: whether it changed, and the schedule.
package struct ScheduleChangeAnswer: Encodable, Sendable {
    package let ok = true
    /// False: it was paused (or running) already.
    package var changed: Bool
    package var schedule: JSONValue

    static let schema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "changed": ["type": "boolean"], "schedule": ScheduleCommands.scheduleSchema], required: ["ok", "schedule"])
}
