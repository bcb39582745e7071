import AgentBase
import JSONSchema

/// `chat_clear`: forgets a conversation's history, a user's, or a user's in a conversation.
package enum ChatClearCommand: AgentCommand {
    package typealias Host = any ChatCommandHost

    package struct Request: Codable, Sendable, Equatable {
        /// Not required: the socket's clients may leave it out ("default", unless `user` is
        /// given: then every conversation of that user); HTTP has it in the path.
        package var conversation: String?
        /// Only this user's lines (see ``ChatUser``): a non-admin clears only their own.
        package var user: String?

        package init(conversation: String? = nil, user: String? = nil) {
            self.conversation = conversation
            self.user = user
        }
    }

    package static let name = "chat_clear"
    package static let summary = "Clears a conversation's history, a user's (every conversation), or a user's in one conversation; a non-admin clears only their own lines."
    package static let routes: [CommandRoute] = [.delete("/api/chat/{conversation}"), .delete("/api/chat/users/{user}/history")]
    package static let mutating = true
    /// Any role may clear their own lines; another user's need the admin role (``ChatUser``).
    package static let requiresAdmin = false
    package static let answersWhileStopping = true
    package static let requestSchema: JSONValue = CommandSchema.object(["conversation": ChatCommands.conversation, "user": ChatUser.schema])
    package static let answerSchema = CommandSchema.okAnswer
    package static var examples: [(request: JSONValue, answer: OKAnswer)] {
        [([:], OKAnswer()), (["conversation": "ops"], OKAnswer()), (["user": "ann"], OKAnswer())]
    }

    package static func run(_ request: Request, on host: any ChatCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<OKAnswer, CommandError>) -> Void) {
        switch ChatUser.scope(requested: request.user, caller: caller) {
        case .failure(let refusal): respond(.failure(refusal))
        case .success(let user):
            // A non-admin's clear is always of their own lines, named or not.
            let conversation = request.conversation ?? (request.user == nil ? ChatHistoryCommand.defaultConversation : nil)
            host.clear(conversation: conversation, user: user, respond: respond)
        }
    }
}
