import AgentBase
import AgentLoop
import JSONSchema

/// `schedule_history`: a schedule's fires and the fire times missed or skipped, newest first.
package enum ScheduleHistoryCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var name: String
        package var limit: Int?

        package init(name: String, limit: Int? = nil) {
            self.name = name
            self.limit = limit
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        /// False: the store is off, the history is what memory keeps.
        package var stored: Bool
        package var history: [JSONValue]
    }

    package static let name = "schedule_history"
    package static let summary = "A schedule's history, newest first: each fire (planned and actual time, run, result) and the fire times missed or skipped, with the reason."
    package static let routes: [CommandRoute] = [.get("/api/schedules/{name}/history")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "name": ScheduleCommands.name,
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
    ], required: ["name"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "stored": ["type": "boolean"],
        "history": ["type": "array", "items": CommandSchema.object([
            "schedule": ["type": "string"], "planned": ["type": "string", "format": "date-time"],
            "actual": ["type": "string", "format": "date-time"],
            "outcome": ["enum": .array(ScheduleHistoryEntry.Outcome.allCases.map { .string($0.rawValue) })],
            "run_id": ["type": "string"], "result": ["type": "string"], "reason": ["type": "string"],
            "count": ["type": "integer", "description": "Fire times the line stands for (a catch-up folds several into one run)."],
            "first_planned": ["type": "string", "format": "date-time"], "lateness": ["type": "number", "description": "Seconds from the planned time to the request."],
        ], required: ["schedule", "actual", "outcome", "count"], open: true)],
    ], required: ["ok", "history"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["name": "nightly", "limit": 5], Answer(stored: true, history: [["schedule": "nightly", "actual": "2026-11-25T03:00:00Z", "outcome": "fired", "count": 1]]))]
    }
    package static var unavailable: CommandError { ScheduleCommands.unavailable }

    @LoopActor package static func run(_ request: Request, on host: Scheduler, caller: CommandCaller,
                           respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.history(request.name, limit: request.limit ?? 100, respond: respond)
    }
}
