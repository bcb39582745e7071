import AgentBase
import AgentLoop
import JSONSchema

/// `schedule_pause` and `schedule_resume`: the same request, answer and schemas; each says
/// whether it pauses.
package protocol SchedulePauseChange: AgentCommand
where Request == ScheduleReference, Answer == ScheduleChangeAnswer, Host == Scheduler {
    /// Pauses (else resumes).
    static var pauses: Bool { get }
}

extension SchedulePauseChange {
    package static var routes: [CommandRoute] { [.post("/api/schedules/{name}/" + (pauses ? "pause" : "resume"))] }
    package static var mutating: Bool { true }
    package static var requestSchema: JSONValue { ScheduleCommands.nameRequest }
    package static var answerSchema: JSONValue { ScheduleChangeAnswer.schema }
    package static var examples: [(request: JSONValue, answer: ScheduleChangeAnswer)] {
        [(["name": "nightly"], ScheduleChangeAnswer(changed: true, schedule: ScheduleCommands.exampleSchedule))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    @LoopActor package static func run(_ request: ScheduleReference, on host: Scheduler, caller: CommandCaller,
                            respond: @escaping (Result<ScheduleChangeAnswer, CommandError>) -> Void) {
        respond(host.setPaused(request.name, pauses))
    }
}
