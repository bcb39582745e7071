import AgentBase
import JSONSchema

/// `chat_summary`: a conversation summed up — the facts from its lines (when, who, how many
/// messages, topics by adapter, alerts, actions), and as text: the chatbot's `llm` adapter's
/// summary when one has `"summary": true`, else (or when the model fails, saying so) made from
/// the facts without a model. A non-admin's is of their own lines.
package enum ChatSummaryCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        package var conversation: String
        package var user: String?

        package init(conversation: String, user: String? = nil) {
            self.conversation = conversation
            self.user = user
        }
    }

    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var conversation: String
        /// `extractive` (made from the lines) or `language_model`.
        package var method: String
        package var text: String
        /// Why the language model's summary could not be had (the extractive one is given).
        package var modelError: String?
        package var first: String?
        package var last: String?
        package var users: [String]
        package var messages: [String: Int]
        package var topics: [ChatSummary.Topic]
        package var alerts: [ChatSummary.Alert]
        package var actions: [ChatSummary.Action]

        enum CodingKeys: String, CodingKey {
            case ok, conversation, method, text, modelError = "model_error", first, last, users, messages, topics, alerts, actions
        }

        /// The extractive summary of `facts`.
        package init(conversation: String, facts: ChatSummary) {
            self.conversation = conversation
            method = "extractive"
            text = facts.text
            first = facts.first
            last = facts.last
            users = facts.users
            messages = facts.messages
            topics = facts.topics
            alerts = facts.alerts
            actions = facts.actions
        }
    }

    package static let name = "chat_summary"
    package static let summary = "A conversation summed up: when, who, how many messages, topics by adapter, alerts raised, actions taken; as text by the llm adapter when it has \"summary\": true, else without a model."
    package static let routes: [CommandRoute] = [.get("/api/chat/conversations/{conversation}/summary")]
    package static let mutating = false
    package static let answersWhileStopping = true
    package static let requestSchema: JSONValue = CommandSchema.object(["conversation": ChatCommands.conversation, "user": ChatUser.schema], required: ["conversation"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "conversation": ["type": "string"],
        "method": ["type": "string", "enum": ["extractive", "language_model"], "description": "How text was made: from the lines without a model, or by the llm adapter (\"summary\": true)."],
        "text": ["type": "string"],
        "model_error": ["type": "string", "description": "Why the language model's summary could not be had: the extractive one is given instead."],
        "first": ["type": "string", "format": "date-time"], "last": ["type": "string", "format": "date-time"],
        "users": ["type": "array", "items": ["type": "string"], "description": "The people who wrote in it."],
        "messages": ["type": "object", "additionalProperties": ["type": "integer"], "description": "Lines by role: user, bot, alert, tool."],
        "topics": ["type": "array", "description": "The adapters that answered, with how many answers each, most first."],
        "alerts": ["type": "array", "description": "The alerts raised in it (the newest 20)."],
        "actions": ["type": "array", "description": "The llm adapter's tool calls: tool, user, outcome (ok or error), detail (the newest 50)."],
    ], required: ["ok", "conversation", "method", "text", "users", "messages", "topics", "alerts", "actions"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        let facts = ChatSummary([])
        return [(["conversation": "ops"], Answer(conversation: "ops", facts: facts))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        switch ChatUser.scope(requested: request.user, caller: caller) {
        case .failure(let refusal): respond(.failure(refusal))
        case .success(let user): host.summary(conversation: request.conversation, user: user, respond: respond)
        }
    }
}
