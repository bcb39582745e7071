import AgentBase
import JSONSchema

/// What the chat commands run on: the relay between the fronts and the chatbot process, which
/// the root (AgentRuntime) owns. The commands are declared here, below the root, so that every
/// front finds them in the one registry.
package protocol ChatCommandHost: AnyObject {
    func chat(_ request: ChatCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
    func history(_ request: ChatHistoryCommand.Request, respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void)
    func clear(_ request: ChatClearCommand.Request, respond: @escaping (Result<OKAnswer, CommandError>) -> Void)
}

/// The chat commands (`agent-control chat`, `/api/chat`).
package enum ChatCommands {
    /// Every typed chat command.
    package static let all: [any AgentCommand.Type] = [ChatCommand.self, ChatHistoryCommand.self, ChatClearCommand.self]

    package static let conversation: JSONValue = [
        "type": "string", "minLength": 1, "maxLength": 200, "default": "default", "description": "The conversation (default: \"default\").",
    ]
}

/// `chat`: a message to the chatbot process, answered with its reply (at most 30 s).
package enum ChatCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        package var text: String
        package var conversation: String?
        /// Passed to the chatbot with the message (a user id, a channel…).
        package var context: JSONObject?

        package init(text: String, conversation: String? = nil, context: JSONObject? = nil) {
            self.text = text
            self.conversation = conversation
            self.context = context
        }
    }

    package static let name = "chat"
    package static let summary = "Sends a message to the chatbot process and waits for its answer (at most 30 s)."
    package static let routes: [CommandRoute] = [.post("/api/chat")]
    package static let mutating = true
    /// Asking the chatbot changes nothing of the agent but its conversation: it answers while
    /// the agent stops as long as the chatbot does.
    package static let answersWhileStopping = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "text": ["type": "string", "minLength": 1, "maxLength": 1_048_576, "description": "At most the control socket's request limit (1 MiB)."],
        "conversation": ChatCommands.conversation,
        "context": ["type": "object", "description": "Passed to the chatbot with the message (a user id, a channel…); the rest adapter forwards it."],
    ], required: ["text"])
    package static let answerSchema: JSONValue = CommandSchema.object(["ok": ["const": true], "text": ["type": "string"]], required: ["ok"], open: true)
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [(["text": "status?", "conversation": "ops", "context": ["user": "ann"]], EncodedAnswer(["ok": true, "text": "all 3 processes run", "adapter": "status"]))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.chat(request, respond: respond)
    }
}

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

/// `chat_clear`: forgets a conversation's history.
package enum ChatClearCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        /// Not required: the socket's clients may leave it out ("default"); HTTP has it in the path.
        package var conversation: String?

        package init(conversation: String? = nil) { self.conversation = conversation }
    }

    package static let name = "chat_clear"
    package static let summary = "Clears a conversation's history."
    package static let routes: [CommandRoute] = [.delete("/api/chat/{conversation}")]
    package static let mutating = true
    package static let answersWhileStopping = true
    package static let requestSchema: JSONValue = CommandSchema.object(["conversation": ChatCommands.conversation])
    package static let answerSchema = CommandSchema.okAnswer
    package static var examples: [(request: JSONValue, answer: OKAnswer)] { [([:], OKAnswer()), (["conversation": "ops"], OKAnswer())] }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
        host.clear(request, respond: respond)
    }
}
