import AgentBase
import AgentStore
import JSONSchema

/// `history`: the run history (starts, readiness, exits, restarts, commands: the audit).
package enum HistoryCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var process: String?
        package var limit: Int?

        package init(process: String? = nil, limit: Int? = nil) {
            self.process = process
            self.limit = limit
        }
    }

    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var entries: [JSONValue]
    }

    package static let name = "history"
    package static let summary = "The run history: starts, readiness, exits, restarts, state changes, commands (the audit)."
    package static let routes: [CommandRoute] = [.get("/api/history")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "process": ["type": "string", "description": "Only this process."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000, "default": 100],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "entries": ["type": "array", "items": ["type": "object"]]], required: ["ok", "entries"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["process": "trades", "limit": 5], Answer(entries: [["time": "2026-11-24T07:00:00Z", "process": "trades", "event": "started", "detail": ""]]))]
    }

    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        Answer(entries: try reader.history(process: request.process, limit: StoreCommands.limit(request.limit)).map(\.json))
    }
}
