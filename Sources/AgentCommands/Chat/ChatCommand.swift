import AgentBase
import JSONSchema

/// `chat`: a message to the chatbot process, answered with its reply (at most 30 s).
package enum ChatCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        package var text: String
        package var conversation: String?
        /// Passed to the chatbot with the message (a channel…); its `user` names the sender
        /// when `user` does not.
        package var context: JSONObject?
        /// Who sends it (see ``ChatUser``): the caller's own by default.
        package var user: String?
        /// The answer's text in pieces as the language model writes it, before the answer: lines
        /// `{"partial": TEXT}` on the control socket, server-sent events over HTTP.
        package var stream: Bool?

        package init(text: String, conversation: String? = nil, context: JSONObject? = nil, user: String? = nil, stream: Bool? = nil) {
            self.text = text
            self.conversation = conversation
            self.context = context
            self.user = user
            self.stream = stream
        }

        /// The text keeps line breaks and tabs and has no other control character (see
        /// ``ControlCharacters``); refused at `/text` otherwise, on every front.
        package init(from decoder: any Decoder) throws {
            let container = try decoder.container(keyedBy: CodingKeys.self)
            text = try container.decode(String.self, forKey: .text)
            conversation = try container.decodeIfPresent(String.self, forKey: .conversation)
            context = try container.decodeIfPresent(JSONObject.self, forKey: .context)
            user = try container.decodeIfPresent(String.self, forKey: .user)
            stream = try container.decodeIfPresent(Bool.self, forKey: .stream)
            if let problem = ControlCharacters.problem(inMessage: text) {
                throw DecodingError.dataCorruptedError(forKey: .text, in: container, debugDescription: problem)
            }
        }
    }

    /// The chatbot's reply.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var text: String
        /// The logic adapter that answered, as the chatbot says.
        package var adapter: String?
        /// How sure the adapter is, as the chatbot says (0…1).
        package var confidence: Double?

        package init(text: String, adapter: String? = nil, confidence: Double? = nil) {
            self.text = text
            self.adapter = adapter
            self.confidence = confidence
        }
    }

    package static let name = "chat"
    package static let summary = "Sends a message to the chatbot process and waits for its answer (at most 30 s)."
    package static let routes: [CommandRoute] = [.post("/api/chat")]
    package static let mutating = true
    /// Any role may chat (a person's own action, as an approval is): what a message may make
    /// happen is decided by the sender's role where it happens — a language model's tool call
    /// (``CommandAccess``), the `process_control` adapter's request.
    package static let requiresAdmin = false
    /// Asking the chatbot changes nothing of the agent but its conversation: it answers while
    /// the agent stops as long as the chatbot does.
    package static let answersWhileStopping = true
    package static let requestSchema: JSONValue = CommandSchema.object([
        "text": ["type": "string", "minLength": 1, "maxLength": 1_048_576, "description": "At most the control socket's request limit (1 MiB); line breaks and tabs, no other control characters."],
        "conversation": ChatCommands.conversation,
        "context": ["type": "object", "description": "Passed to the chatbot with the message (a channel…); the adapters get it with the sender's user and preferences added. Its user names the sender when user does not."],
        "user": ChatUser.schema,
        "stream": ["type": "boolean", "description": "The answer's text as the language model writes it, before the whole answer: on the control socket lines {\"partial\": TEXT} before the answer's line; over HTTP server-sent events (`partial` events, then one `answer` event; also with Accept: text/event-stream)."],
    ], required: ["text"])
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "text": ["type": "string"],
        "adapter": ["type": "string", "description": "The logic adapter that answered."],
        "confidence": ["type": "number", "description": "How sure the adapter is (0…1)."],
    ], required: ["ok", "text"], open: true)
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [(["text": "status?", "conversation": "ops", "user": "ann"], Answer(text: "all 3 processes run", adapter: "status", confidence: 0.9))]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.chat(request, caller: caller, respond: respond)
    }
}
