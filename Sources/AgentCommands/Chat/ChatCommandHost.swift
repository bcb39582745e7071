import AgentBase
import JSONSchema

/// What the chat commands run on: the relay between the fronts and the chatbot process, which
/// the root (AgentRuntime) owns. The commands are declared here, below the root, so that every
/// front finds them in the one registry. (`chat_history` is a store read: ``ChatHistoryCommand``.)
package protocol ChatCommandHost: AnyObject {
    func chat(_ request: ChatCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatCommand.Answer, CommandError>) -> Void)
    /// `chat_voice`: a recording to recognise and answer in the chatbot's worker.
    func voice(_ request: ChatVoiceCommand.Request, caller: CommandCaller, respond: @escaping (Result<ChatVoiceCommand.Answer, CommandError>) -> Void)
    /// `chat_clear`: forgets the lines of a conversation and/or a user (checked by the command);
    /// a named conversation with no such line is not found.
    func clear(conversation: String?, user: String?, respond: @escaping (Result<OKAnswer, CommandError>) -> Void)
    /// `chat_summary`: read off the loop; the `llm` adapter's text when one has `"summary": true`.
    func summary(conversation: String, user: String?, respond: @escaping (Result<ChatSummaryCommand.Answer, CommandError>) -> Void)
    /// `chat_preferences_set`: a user's preferences changed, validated against the chatbot's
    /// `preferences_schema`, kept in the store; answered with the whole preferences once written.
    func setPreferences(_ request: ChatPreferencesSetCommand.Request, user: String,
                        respond: @escaping (Result<ChatPreferencesCommand.Answer, CommandError>) -> Void)
}
