import AgentBase
import AgentLoop
import JSONSchema

/// `schedule_next`: a schedule's coming fire times.
package enum ScheduleNextCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var name: String
        package var count: Int?

        package init(name: String, count: Int? = nil) {
            self.name = name
            self.count = count
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var schedule: String
        package var timezone: String
        /// ISO 8601 local times with their UTC offset.
        package var times: [String]
    }

    package static let name = "schedule_next"
    package static let summary = "A schedule's coming fire times, as ISO 8601 local times with their UTC offset."
    package static let routes: [CommandRoute] = [.get("/api/schedules/{name}/next")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": ScheduleCommands.name,
        "count": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 10],
    ], required: ["name"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "schedule": ["type": "string"], "timezone": ["type": "string"],
        "times": ["type": "array", "items": ["type": "string", "format": "date-time"]],
    ], required: ["ok", "times"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "nightly", "count": 2], Answer(schedule: "nightly", timezone: "UTC", times: ["2026-11-25T03:00:00Z", "2026-11-26T03:00:00Z"]))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: Scheduler, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(host.comingTimes(request.name, count: request.count ?? 10))
    }
}
