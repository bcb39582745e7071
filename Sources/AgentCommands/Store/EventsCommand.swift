import AgentBase
import AgentStore
import JSONSchema

/// `events`: events from the store, newest last; paged with `after`.
package enum EventsCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var type: String?
        package var source: String?
        /// Only events about this run (a task run's or a workflow run's id: their payload's `run_id`).
        package var run: String?
        /// A duration back from now (30s, 10m, 2h, 1d) or an ISO 8601 time.
        package var since: String?
        package var after: Int?
        package var limit: Int?

        package init(type: String? = nil, source: String? = nil, run: String? = nil, since: String? = nil, after: Int? = nil, limit: Int? = nil) {
            self.type = type
            self.source = source
            self.run = run
            self.since = since
            self.after = after
            self.limit = limit
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var events: [JSONValue]
        /// The `after` that continues after these events.
        package var next: Int
        /// True when the answer stopped at ``ListAnswerSize/bytes`` (nil otherwise).
        package var truncated: Bool?

        package init(events: [JSONValue], next: Int, truncated: Bool = false) {
            self.events = events
            self.next = next
            self.truncated = truncated ? true : nil
        }
    }

    package static let name = "events"
    package static let summary = "Events from the store, newest last, by type, source (process), run and time; page with `after` (the last id seen)."
    package static let routes: [CommandRoute] = [.get("/api/events")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "type": ["type": "string", "pattern": .string(ControlCharacters.nonePattern), "description": "Only events of this type (no control characters)."],
        "source": ["type": "string", "pattern": .string(ControlCharacters.nonePattern), "description": "Only events from this process (and its replicas; no control characters)."],
        "run": ["type": "string", "minLength": 1, "maxLength": 512, "pattern": .string(ControlCharacters.nonePattern),
                "description": "Only events about this run: a task run's or a workflow run's id (the payload's run_id; no control characters)."],
        "since": ["type": "string", "description": "A duration back from now of at most 100 years (30s, 10m, 2h, 1d) or an ISO 8601 time."],
        "after": ["type": "integer", "minimum": 0, "description": "Only events with a greater id (paging, following)."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "events": ["type": "array", "items": CommandSchema.object([
            "id": ["type": "integer"], "time": ["type": "string"], "type": ["type": "string"], "source": ["type": "string"], "payload": [:],
        ], open: true)],
        "next": ["type": "integer", "description": "The `after` that continues after these events."],
        "truncated": ["const": true, "description": "The answer stopped at 4 MiB of JSON, before its limit: the newest events that fit (the first page), or the next ones after `after`; page on with `next`."],
    ], required: ["ok", "events"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(events: [["id": 7, "time": "2026-11-24T07:00:00Z", "type": "price", "source": "trades", "payload": ["p": 1]]], next: 7)),
         (["type": "price", "source": "trades", "since": "10m", "after": 7, "limit": 10], Answer(events: [], next: 7)),
         (["type": "task.retrying", "source": "tasks", "run": "r1"], Answer(events: [], next: 0))]
    }

    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        var since: Double?
        if let text = request.since {
            guard let parsed = TimeSpec.since(text) else {
                throw CommandError.invalid("/since: expected \(TimeSpec.sinceForm); found \"\(text)\"", pointer: "/since")
            }
            since = parsed
        }
        let after = Int64(request.after ?? 0)
        // The first page is the newest events; following pages continue after `after`.
        let (events, truncated) = try reader.events(types: request.type.map { [$0] } ?? [], sources: request.source.map { [$0] } ?? [],
                                                    runs: request.run.map { [$0] } ?? [], since: since, afterID: after,
                                                    limit: StoreCommands.limit(request.limit), newest: after == 0, maxBytes: ListAnswerSize.bytes)
        return Answer(events: events.map(\.json), next: Int(events.last?.id ?? after), truncated: truncated)
    }
}
