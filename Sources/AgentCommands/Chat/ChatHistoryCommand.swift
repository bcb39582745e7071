import AgentBase
import JSONSchema

/// `chat_history`: a conversation's messages, oldest first.
package enum ChatHistoryCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

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
        /// The lines in ``Line``'s shape, kept as the store's rows: a history can be megabytes,
        /// and decoding it into `Line`s on the loop only to encode them again held the loop for
        /// seconds with 20 such answers waiting (`ResourceExhaustionTests`).
        package var lines: JSONValue

        package init(lines: [Line]) { self.lines = (try? JSONValueEncoder().encode(lines)) ?? [] }

        /// The store's rows (`id`, `time`, `role`, `source`, `text`), as they are.
        package init(rows: JSONValue) { lines = rows }
    }

    /// One line of a conversation, as the store keeps it.
    package struct Line: Codable, Sendable, Equatable {
        package var id: Int
        /// Seconds since 1970.
        package var time: Double
        /// `user`, `bot` or `alert`.
        package var role: String
        /// The adapter or process that wrote a bot's or an alert's line (empty for a user's).
        package var source: String
        package var text: String

        package init(id: Int, time: Double, role: String, source: String, text: String) {
            self.id = id
            self.time = time
            self.role = role
            self.source = source
            self.text = text
        }
    }

    package static let name = "chat_history"
    package static let summary = "A conversation's messages, oldest first."
    package static let routes: [CommandRoute] = [.get("/api/chat/{conversation}")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "conversation": ChatCommands.conversation,
        "after": ["type": "integer", "minimum": 0, "description": "Only messages after this id."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "lines": ["type": "array", "items": CommandSchema.object([
            "id": ["type": "integer"], "time": ["type": "number", "description": "Seconds since 1970."],
            "role": ["type": "string", "enum": ["user", "bot", "alert"]], "source": ["type": "string"], "text": ["type": "string"],
        ], required: ["id", "time", "role", "source", "text"], open: true)],
    ], required: ["ok", "lines"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["conversation": "ops", "after": 3, "limit": 10],
          Answer(lines: [Line(id: 4, time: 1_700_000_000.25, role: "user", source: "", text: "status?")]))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.history(request, respond: respond)
    }
}
