import AgentBase
import JSONSchema

/// What the chat commands run on: the relay between the fronts and the chatbot process, which
/// the root (AgentRuntime) owns. The commands are declared here, below the root, so that every
/// front finds them in the one registry. (`chat_history` is a store read: ``ChatHistoryCommand``.)
package protocol ChatCommandHost: AnyObject {
    func chat(_ request: ChatCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void)
    /// `chat_voice`: a recording to recognise and answer in the chatbot's worker.
    func voice(_ request: ChatVoiceCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatVoiceCommand.Answer, CommandError>) -> Void)
    func clear(_ request: ChatClearCommand.Request, respond: @escaping (Result<OKAnswer, CommandError>) -> Void)
}
