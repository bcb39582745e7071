import AgentBase
import AgentStore
import JSONSchema

/// `chat_history`: a conversation's messages, a user's, or a user's in a conversation, oldest
/// first; a non-admin reads only their own (``ChatUser``). A store read (``StoreReadCommand``):
/// a history can be megabytes, read and encoded off the loop.
package enum ChatHistoryCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var conversation: String?
        /// Only this user's lines; with no `conversation`, in every conversation.
        package var user: String?
        package var after: Int?
        package var limit: Int?
        /// Set by ``scoped(_:caller:)`` for a non-admin: their own lines only, whatever was asked.
        package var onlyUser: String?

        enum CodingKeys: String, CodingKey { case conversation, user, after, limit }

        package init(conversation: String? = nil, user: String? = nil, after: Int? = nil, limit: Int? = nil) {
            self.conversation = conversation
            self.user = user
            self.after = after
            self.limit = limit
        }
    }

    /// A conversation's lines, oldest first.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var lines: [Line]
        /// True when the answer stopped at ``ListAnswerSize/bytes`` (nil otherwise).
        package var truncated: Bool?

        package init(lines: [Line], truncated: Bool = false) {
            self.lines = lines
            self.truncated = truncated ? true : nil
        }
    }

    /// One line of a conversation, as the store keeps it.
    package struct Line: Codable, Sendable, Equatable {
        package var id: Int
        /// When it was written: RFC 3339 in UTC with milliseconds, as every time the API answers.
        package var time: String
        package var conversation: String
        /// Whom the line is for: who wrote it, or whom the bot answered (none: an alert).
        package var user: String?
        /// `user`, `bot`, `alert` or `tool` (a tool call of the `llm` adapter and its outcome).
        package var role: String
        /// The adapter or process that wrote a bot's or an alert's line (empty for a user's).
        package var source: String
        package var text: String
        /// A voice message's transcript (source `voice`): how sure the recogniser was (0…1).
        package var confidence: Double?

        package init(id: Int, time: String, conversation: String = ChatHistoryCommand.defaultConversation, user: String? = nil,
                     role: String, source: String, text: String, confidence: Double? = nil) {
            self.id = id
            self.time = time
            self.conversation = conversation
            self.user = user
            self.role = role
            self.source = source
            self.text = text
            self.confidence = confidence
        }
    }

    package static let name = "chat_history"
    package static let summary = "A conversation's messages, a user's (every conversation), or a user's in one conversation, oldest first; a non-admin reads only their own."
    package static let routes: [CommandRoute] = [.get("/api/chat/{conversation}"), .get("/api/chat/users/{user}/history")]
    package static let requestSchema: JSONValue = CommandSchema.object([
        "conversation": ChatCommands.conversation,
        "user": ChatUser.schema,
        "after": ["type": "integer", "minimum": 0, "description": "Only messages after this id."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "lines": ["type": "array", "items": CommandSchema.object([
            "id": ["type": "integer"], "time": ["type": "string", "format": "date-time", "description": "When it was written (RFC 3339, UTC)."],
            "conversation": ["type": "string"], "user": ["type": "string", "description": "Whom the line is for: who wrote it, or whom the bot answered (absent: an alert)."],
            "role": ["type": "string", "enum": ["user", "bot", "alert", "tool"], "description": "tool: a tool call of the llm adapter (source: the tool) and its outcome."],
            "source": ["type": "string"], "text": ["type": "string"],
            "confidence": ["type": "number", "minimum": 0, "maximum": 1, "description": "A voice message's transcript (source voice): how sure the recogniser was."],
        ], required: ["id", "time", "conversation", "role", "source", "text"], open: true)],
        "truncated": ["const": true, "description": "The answer stopped at 4 MiB of JSON, before its limit: the newest lines that fit."],
    ], required: ["ok", "lines"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["conversation": "ops", "after": 3, "limit": 10],
          Answer(lines: [Line(id: 4, time: "2023-11-14T22:13:20.250Z", conversation: "ops", user: "ann", role: "user", source: "", text: "status?")]))]
    }

    /// The conversation every message goes to unless it names another: it is never unknown.
    package static let defaultConversation = "default"

    /// A non-admin's read is of their own lines only; naming another user is refused.
    package static func scoped(_ request: Request, caller: CommandCaller) -> Result<Request, CommandError> {
        ChatUser.scope(requested: request.user, caller: caller).map { user in
            var scoped = request
            scoped.onlyUser = user
            return scoped
        }
    }

    /// The newest `limit` lines after `after`, oldest first; an unknown conversation (not
    /// `default`, and no line stored that the caller may read) is refused as not found.
    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        let (conversation, user) = try selection(request, from: reader)
        let (lines, truncated) = try reader.chat(conversation: conversation, user: user, after: request.after ?? 0,
                                                 limit: StoreCommands.limit(request.limit), maxBytes: ListAnswerSize.bytes)
        return Answer(lines: lines.map(Line.init), truncated: truncated)
    }

    /// The conversation and user a request reads (a conversation omitted: `default`, unless a
    /// user is named), after checking that a conversation named has lines the caller may read.
    package static func selection(_ request: Request, from reader: StoreReader) throws -> (conversation: String?, user: String?) {
        let user = request.onlyUser ?? request.user
        let conversation = request.conversation ?? (request.user == nil ? defaultConversation : nil)
        if let conversation, conversation != defaultConversation, try !reader.chatExists(conversation: conversation, user: user) {
            throw notFound(conversation)
        }
        return (conversation, user)
    }

    package static func notFound(_ conversation: String) -> CommandError {
        CommandError.notFound("no conversation \(JSONValue.string(conversation).serialized()): nothing was said in it yet (or its history was cleared); a message to it starts it")
    }
}

extension ChatHistoryCommand.Line {
    /// A stored line as the API shows it.
    package init(_ line: ChatLine) {
        self.init(id: line.id, time: StoreReader.StoredEvent.iso(line.time), conversation: line.conversation, user: line.user,
                  role: line.role, source: line.source, text: line.text, confidence: line.confidence)
    }
}
