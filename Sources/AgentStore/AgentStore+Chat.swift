import AgentWork
import Foundation
import GRDB

extension AgentStore {
    /// Adds a line to a conversation's chat history (`user`, `bot`, `alert` or `tool`);
    /// `confidence`: a voice message's transcript, how sure the recogniser was.
    /// A NUL in `text` (an adapter's or a model's answer may hold one) is kept as U+FFFD: a
    /// text bound to SQLite ends at its first NUL, and the rest of the line was lost unsaid.
    public func recordChat(conversation: String, user: String? = nil, role: String, source: String, text: String, confidence: Double? = nil) {
        let text = text.contains("\u{0}") ? text.replacingOccurrences(of: "\u{0}", with: "\u{FFFD}") : text
        let line = ChatLine(time: Date().timeIntervalSince1970, conversation: conversation, user: user, role: role, source: source, text: text, confidence: confidence)
        queued.withLock { $0.chat.append(.line(line)) }
        queued.signal()
    }

    /// Forgets lines: a conversation's, a user's, or a user's in a conversation (both nil: nothing).
    public func clearChat(conversation: String?, user: String? = nil) {
        guard conversation != nil || user != nil else { return }
        queued.withLock { $0.chat.append(.clear(conversation: conversation, user: user)) }
        queued.signal()
    }

    /// Keeps a user's preferences (a JSON object's text); `done` runs once it is committed (or
    /// could not be: false).
    public func setChatPreferences(user: String, value: String, done: @escaping @Sendable (Bool) -> Void) {
        queued.withLock { $0.chat.append(.preferences(user: user, value: value)) }
        queued.signal()
        commitSchedules(ScheduleCommit()) { done($0) }
    }

    /// Applies the chat writes of one batch, in order.
    static func write(_ writes: [ChatWrite], in db: Database) throws {
        for write in writes {
            switch write {
            case .line(let line):
                // Cached: every message and answer is a line (not compiled again each time).
                try db.cachedStatement(sql: "INSERT INTO chat (time, conversation, user, role, source, text, confidence) VALUES (?, ?, ?, ?, ?, ?, ?)")
                    .execute(arguments: [line.time, line.conversation, line.user, line.role, line.source, line.text, line.confidence])
            case .clear(let conversation, let user):
                let (filter, arguments) = StoreReader.chatFilter(conversation: conversation, user: user)
                try db.execute(sql: "DELETE FROM chat WHERE \(filter)", arguments: arguments)
            case .preferences(let user, let value):
                try db.execute(sql: "INSERT OR REPLACE INTO chat_preferences (user, time, value) VALUES (?, ?, ?)",
                               arguments: [user, Date().timeIntervalSince1970, value])
            }
        }
    }
}
