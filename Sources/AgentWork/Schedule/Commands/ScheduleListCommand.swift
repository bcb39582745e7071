import AgentBase
import AgentLoop
import JSONSchema

/// `schedule_list`: every schedule with its timing, next and last fire and counts.
package enum ScheduleListCommand: @preconcurrency AgentCommand {
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var schedules: [JSONValue]
        /// In a fleet: the agent that leads (fires) the schedules now (absent: none does).
        package var leader: String?
        /// In a fleet: whether this agent is the leader.
        package var leads: Bool?

        package init(schedules: [JSONValue], leader: String? = nil, leads: Bool? = nil) {
            self.schedules = schedules
            self.leader = leader
            self.leads = leads
        }
    }

    package static let name = "schedule_list"
    package static let summary = "The schedules: timing, next and last fire, last result, paused, fires missed and skipped."
    package static let routes: [CommandRoute] = [.get("/api/schedules")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "schedules": ["type": "array", "items": ScheduleCommands.scheduleSchema],
         "leader": ["type": "string", "description": "In a fleet: the agent that leads (fires) the schedules now; absent when none does."],
         "leads": ["type": "boolean", "description": "In a fleet: whether this agent leads them (only the leader knows the fired, missed and skipped counts)."]],
        required: ["ok", "schedules"])
    package static var examples: [(request: JSONValue, answer: Answer)] { [([:], Answer(schedules: [ScheduleCommands.exampleSchedule]))] }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    @LoopActor package static func run(_ request: NoFields, on host: Scheduler, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.list(respond: respond)
    }
}
