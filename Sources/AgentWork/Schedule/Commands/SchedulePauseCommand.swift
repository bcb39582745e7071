import AgentBase
import JSONSchema

/// `schedule_pause`: pauses a schedule (kept across restarts); its fire times are skipped.
package enum SchedulePauseCommand: AgentCommand {
    package typealias Request = ScheduleReference

    package static let name = "schedule_pause"
    package static let summary = "Pauses a schedule (kept across restarts): its fire times are skipped until it is resumed."
    package static let routes: [CommandRoute] = [.post("/api/schedules/{name}/pause")]
    package static let mutating = true
    package static var requestSchema: JSONValue { ScheduleCommands.nameRequest }
    package static var answerSchema: JSONValue { ScheduleChangeAnswer.schema }
    package static var examples: [(request: JSONValue, answer: ScheduleChangeAnswer)] {
        [(["name": "nightly"], ScheduleChangeAnswer(changed: true, schedule: ScheduleCommands.exampleSchedule))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    package static func run(_ request: ScheduleReference, on host: Scheduler, caller: CommandCaller,
                            respond: @escaping (Result<ScheduleChangeAnswer, CommandError>) -> Void) {
        respond(host.setPaused(request.name, true))
    }
}
