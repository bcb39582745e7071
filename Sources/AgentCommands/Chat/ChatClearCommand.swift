import AgentBase
import JSONSchema

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
