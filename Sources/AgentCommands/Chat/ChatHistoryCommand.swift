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

    package static let name = "chat_history"
    package static let summary = "A conversation's messages, oldest first."
    package static let routes: [CommandRoute] = [.get("/api/chat/{conversation}")]
    package static let mutating = false
    package static let requestSchema: JSONValue = CommandSchema.object([
        "conversation": ChatCommands.conversation,
        "after": ["type": "integer", "minimum": 0, "description": "Only messages after this id."],
        "limit": ["type": "integer", "minimum": 1, "maximum": 10000],
    ])
    package static let answerSchema: JSONValue = CommandSchema.object(
        ["ok": ["const": true], "lines": ["type": "array", "items": ["type": "object"]]], required: ["ok"], open: true)
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [(["conversation": "ops", "after": 3, "limit": 10],
          EncodedAnswer(["ok": true, "lines": [["id": 4, "time": 1_700_000_000, "role": "user", "source": "", "text": "status?"]]]))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.history(request, respond: respond)
    }
}
