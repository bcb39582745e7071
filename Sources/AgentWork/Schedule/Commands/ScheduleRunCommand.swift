import AgentBase
import AgentLoop
import JSONSchema

/// `schedule_run`: fires a schedule now, outside its timing.
package enum ScheduleRunCommand: @preconcurrency AgentCommand {
    package typealias Request = ScheduleReference

    package struct Answer: Encodable, Sendable {
        package let ok = true
        /// The task run, or the workflow run the fire started (null: nothing was started).
        package var run: JSONValue
        package var workflowRun: JSONValue?
        package var schedule: JSONValue

        enum CodingKeys: String, CodingKey {
            case ok, run, workflowRun = "workflow_run", schedule
        }
    }

    package static let name = "schedule_run"
    package static let summary = "Runs a schedule's task (or starts its workflow) now, with its input (recorded in its history as run now; its timing is unchanged)."
    package static let routes: [CommandRoute] = [.post("/api/schedules/{name}/run")]
    package static let mutating = true
    package static var requestSchema: JSONValue { ScheduleCommands.nameRequest }
    package static var answerSchema: JSONValue {
        CommandSchema.object([
            "ok": ["const": true], "run": ["anyOf": [TaskCommands.runSchema, WorkflowCommands.runSchema], "description": "The task run, or the workflow run the fire started."],
            "workflow_run": WorkflowCommands.runSchema, "schedule": ScheduleCommands.scheduleSchema,
        ], required: ["ok", "run"])
    }
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "nightly"], Answer(run: TaskCommands.exampleRun, schedule: ScheduleCommands.exampleSchedule))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    @LoopActor package static func run(_ request: ScheduleReference, on host: Scheduler, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.runNow(request.name, respond: respond)
    }
}
