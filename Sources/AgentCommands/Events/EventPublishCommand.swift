import AgentBase
import AgentLoop
import AgentWork
import JSONSchema

/// `event_publish`: an event from outside the agent (`agent-control publish`, POST /api/events),
/// routed as a process's emit — to subscribed monitors, `on_event` triggers, waiting workflow
/// runs, and the fleet when it publishes the type. Answered once routed and, with the store on,
/// committed; refused (503) while the store cannot write.
package enum EventPublishCommand: @preconcurrency AgentCommand {
    package struct Request: Codable, Sendable {
        package var type: String
        /// Default `{}`.
        package var payload: JSONValue?
        /// Default `cli` (the control socket) or `api` (HTTP).
        package var source: String?

        package init(type: String, payload: JSONValue? = nil, source: String? = nil) {
            self.type = type
            self.payload = payload
            self.source = source
        }
    }

    package struct Answer: Encodable, Sendable {
        package var ok = true
        package var type: String
        package var source: String
        /// RFC 3339, when it was published.
        package var time: String
        /// Committed to the event log (false: the agent runs without a store).
        package var stored: Bool
    }

    package static let name = "event_publish"
    package static let summary = "Publishes an event from outside the agent: routed as a process's emit (monitors, on_event triggers, waiting workflow runs, the fleet for the types it publishes); answered once routed and committed."
    package static let routes: [CommandRoute] = [.post("/api/events")]
    package static let mutating = true
    package static let grant: String? = "publish"
    package static let requestSchema: JSONValue = CommandSchema.object([
        "type": ["type": "string", "minLength": 1, "maxLength": 200,
                 "description": "The event type: letters, digits, `_`, `-`, `.` (not a type the runtime publishes itself, e.g. task.succeeded)."],
        "payload": ["description": "Any JSON (default {}); at most /events/max_payload_bytes (64 KiB by default) and, for a type declared under /events/types, valid against its schema."],
        "source": ["type": "string", "minLength": 1, "maxLength": 200,
                   "description": "Who publishes, as events show it (default: cli or api): a plain name, not one of the runtime's sources (tasks, schedules, workflows, control)."],
    ], required: ["type"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "type": ["type": "string"], "source": ["type": "string"],
        "time": ["type": "string", "format": "date-time"],
        "stored": ["type": "boolean", "description": "Committed to the event log (false only when the agent runs without a store)."],
    ], required: ["ok", "type", "source", "time", "stored"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        let answer = Answer(type: "order.confirmed", source: "shop", time: "2026-11-26T09:00:00Z", stored: true)
        return [(["type": "order.confirmed", "payload": ["order": 7], "source": "shop"], answer), (["type": "order.confirmed"], answer)]
    }

    @LoopActor package static func run(_ request: Request, on host: WorkHost, caller: CommandCaller,
                                       respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.publishFromOutside(type: request.type, payload: request.payload, source: request.source, caller: caller) { result in
            respond(result.map { Answer(type: $0.type, source: $0.source, time: TaskRun.iso($0.time), stored: $0.stored) })
        }
    }
}
