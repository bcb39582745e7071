import AgentBase
import JSONSchema

/// `schedule_resume`: Resumes a paused schedule from now (the fire times while paused are recorded as skipped).
package enum ScheduleResumeCommand: AgentCommand {
    package typealias Request = ScheduleReference

    package static let name = "schedule_resume"
    package static let summary = "Resumes a paused schedule from now (the fire times while paused are recorded as skipped)."
    package static let routes: [CommandRoute] = [.post("/api/schedules/{name}/resume")]
    package static let mutating = true
    package static var requestSchema: JSONValue { ScheduleCommands.nameRequest }
    package static var answerSchema: JSONValue { ScheduleChangeAnswer.schema }
    package static var examples: [(request: JSONValue, answer: ScheduleChangeAnswer)] {
        [(["name": "nightly"], ScheduleChangeAnswer(changed: true, schedule: ScheduleCommands.exampleSchedule))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    package static func run(_ request: ScheduleReference, on host: Scheduler, caller: CommandCaller,
                           respond: @escaping (Result<ScheduleChangeAnswer, CommandError>) -> Void) {
        respond(host.setPaused(request.name, false))
    }
}
