import AgentBase
import AgentStore
import JSONSchema

/// `chat_transcript`: a conversation written out whole — as text, Markdown or its lines as
/// JSON; a non-admin's is of their own lines. A store read, off the loop.
package enum ChatTranscriptCommand: @preconcurrency StoreReadCommand {
    package struct Request: Codable, Sendable, Equatable {
        package var conversation: String
        /// `text` (default), `markdown` or `json`.
        package var format: String?
        /// Only this user's lines (an admin's choice; a non-admin's are always their own).
        package var user: String?
        /// Set by ``scoped(_:caller:)`` for a non-admin.
        package var onlyUser: String?

        enum CodingKeys: String, CodingKey { case conversation, format, user }

        package init(conversation: String, format: String? = nil, user: String? = nil) {
            self.conversation = conversation
            self.format = format
            self.user = user
        }
    }

    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var conversation: String
        package var format: String
        /// The transcript (`text` and `markdown`).
        package var text: String?
        /// The lines (`json`).
        package var lines: [ChatHistoryCommand.Line]?
        /// More lines than a transcript holds (10,000, or 4 MiB of text; the newest are kept).
        package var truncated: Bool?
    }

    package static let name = "chat_transcript"
    package static let summary = "A conversation written out whole: as text, Markdown or its lines as JSON (a non-admin's: their own lines)."
    package static let routes: [CommandRoute] = [.get("/api/chat/conversations/{conversation}/transcript")]
    package static let formats = ["text", "markdown", "json"]
    /// The most lines a transcript holds (the newest).
    package static let maximumLines = 10_000
    package static let requestSchema: JSONValue = CommandSchema.object([
        "conversation": ChatCommands.conversation,
        "format": ["type": "string", "enum": .array(formats.map(JSONValue.string)), "default": "text",
                   "description": "text: one line per message; markdown: a document; json: the lines as chat_history gives them."],
        "user": ChatUser.schema,
    ], required: ["conversation"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "conversation": ["type": "string"], "format": ["type": "string", "enum": .array(formats.map(JSONValue.string))],
        "text": ["type": "string", "description": "The transcript (text and markdown)."],
        "lines": ["type": "array", "description": "The lines (json), as chat_history gives them."],
        "truncated": ["type": "boolean", "description": "More lines than a transcript holds (10,000, or 4 MiB of text): the newest are kept."],
    ], required: ["ok", "conversation", "format"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["conversation": "ops", "format": "text"],
          Answer(conversation: "ops", format: "text", text: "2023-11-14T22:13:20.250Z ann: status?\n2023-11-14T22:13:20.300Z bot (status): all 3 processes run\n"))]
    }

    package static func scoped(_ request: Request, caller: CommandCaller) -> Result<Request, CommandError> {
        ChatUser.scope(requested: request.user, caller: caller).map { user in
            var scoped = request
            scoped.onlyUser = user
            return scoped
        }
    }

    package static func read(_ request: Request, from reader: StoreReader) throws -> Answer {
        let user = request.onlyUser ?? request.user
        let (stored, cut) = try reader.chat(conversation: request.conversation, user: user, limit: maximumLines + 1, maxBytes: ListAnswerSize.bytes)
        if stored.isEmpty, request.conversation != ChatHistoryCommand.defaultConversation { throw ChatHistoryCommand.notFound(request.conversation) }
        let lines = Array(stored.suffix(maximumLines))
        let format = request.format ?? "text"
        var answer = Answer(conversation: request.conversation, format: format, truncated: cut || stored.count > maximumLines ? true : nil)
        switch format {
        case "json": answer.lines = lines.map(ChatHistoryCommand.Line.init)
        case "markdown": answer.text = ChatTranscript.markdown(lines, conversation: request.conversation, truncated: answer.truncated == true)
        default: answer.text = ChatTranscript.text(lines)
        }
        return answer
    }
}
