import AgentBase
import AgentStore
import JSONSchema

/// `chat_history`: a conversation's messages, oldest first. A store read (``StoreReadCommand``):
/// a history can be megabytes, read and encoded off the loop.
package enum ChatHistoryCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var conversation: String?
        package var after: Int?
        package var limit: Int?

        package init(conversation: String? = nil, after: Int? = nil, limit: Int? = nil) {
            self.conversation = conversation
            self.after = after
            self.limit = limit
        }
    }

    /// A conversation's lines, oldest first.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var lines: [Line]

        package init(lines: [Line]) { self.lines = lines }
    }

    /// One line of a conversation, as the store keeps it.
    package struct Line: Codable, Sendable, Equatable {
        package var id: Int
        /// When it was written: RFC 3339 in UTC with milliseconds, as every time the API answers.
        package var time: String
        /// `user`, `bot` or `alert`.
        package var role: String
        /// The adapter or process that wrote a bot's or an alert's line (empty for a user's).
        package var source: String
        package var text: String
        /// A voice message's transcript (source `voice`): how sure the recogniser was (0…1).
        package var confidence: Double?

        package init(id: Int, time: String, role: String, source: String, text: String, confidence: Double? = nil) {
            self.id = id
            self.time = time
            self.role = role
            self.source = source
            self.text = text
            self.confidence = confidence
        }
    }

    package static let name = "chat_history"
    package static let summary = "A conversation's messages, oldest first."
    package static let routes: [CommandRoute] = [.get("/api/chat/{conversation}")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "conversation": ChatCommands.conversation,
        "after": ["type": "integer", "minimum": 0, "description": "Only messages after this id."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "lines": ["type": "array", "items": CommandSchema.object([
            "id": ["type": "integer"], "time": ["type": "string", "format": "date-time", "description": "When it was written (RFC 3339, UTC)."],
            "role": ["type": "string", "enum": ["user", "bot", "alert"]], "source": ["type": "string"], "text": ["type": "string"],
            "confidence": ["type": "number", "minimum": 0, "maximum": 1, "description": "A voice message's transcript (source voice): how sure the recogniser was."],
        ], required: ["id", "time", "role", "source", "text"], open: true)],
    ], required: ["ok", "lines"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["conversation": "ops", "after": 3, "limit": 10],
          Answer(lines: [Line(id: 4, time: "2023-11-14T22:13:20.250Z", role: "user", source: "", text: "status?")]))]
    }

    /// The conversation every message goes to unless it names another: it is never unknown.
    package static let defaultConversation = "default"

    /// The newest `limit` lines after `after`, oldest first; an unknown conversation (not
    /// `default`, and no line stored) is refused as not found.
    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        let conversation = request.conversation ?? defaultConversation
        let lines = try reader.chat(conversation: conversation, after: request.after ?? 0, limit: StoreCommands.limit(request.limit))
        if lines.isEmpty, conversation != defaultConversation, try reader.chat(conversation: conversation, after: 0, limit: 1).isEmpty {
            throw CommandError.notFound("no conversation \(JSONValue.string(conversation).serialized()): nothing was said in it yet (or its history was cleared); a message to it starts it")
        }
        return Answer(lines: lines.map { Line(id: $0.id, time: StoreReader.StoredEvent.iso($0.time), role: $0.role, source: $0.source, text: $0.text, confidence: $0.confidence) })
    }
}
