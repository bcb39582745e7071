import Foundation

/// One line of a conversation, as the store keeps it.
public struct ChatLine: Sendable, Equatable {
    public var id: Int
    public var time: Double
    public var conversation: String
    /// Whom the line is for: the person who wrote it, or whom the bot answered (nil: an alert,
    /// or a line written before lines had users).
    public var user: String?
    /// `user`, `bot`, `alert` or `tool` (a tool call the `llm` adapter made, and its outcome).
    public var role: String
    /// The adapter, process or tool that wrote a bot's, alert's or tool's line (empty for a user's; `voice` for a transcript).
    public var source: String
    public var text: String
    /// A voice message's transcript: how sure the recogniser was (0…1).
    public var confidence: Double?

    public init(id: Int = 0, time: Double, conversation: String, user: String?, role: String, source: String, text: String, confidence: Double? = nil) {
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

/// A change to the chat tables, queued for the store's writer and applied in the order asked.
enum ChatWrite: Sendable {
    case line(ChatLine)
    /// Forgets lines: of a conversation, of a user, or of a user in a conversation.
    case clear(conversation: String?, user: String?)
    /// A user's whole preferences object (JSON text).
    case preferences(user: String, value: String)
}
