import Foundation
import GRDB

extension StoreReader {
    /// The newest `limit` lines after the line `after` (an id), oldest first: of a conversation,
    /// of a user (in every conversation), or of a user in a conversation.
    public func chat(conversation: String?, user: String? = nil, after: Int = 0, limit: Int) throws -> [ChatLine] {
        try chat(conversation: conversation, user: user, after: after, limit: limit, maxBytes: .max).lines
    }

    /// ``chat(conversation:user:after:limit:)`` stopping once the lines' texts come to
    /// `maxBytes` (the newest that fit; the newest line always): `truncated` says whether it did.
    public func chat(conversation: String?, user: String? = nil, after: Int = 0, limit: Int,
                     maxBytes: Int) throws -> (lines: [ChatLine], truncated: Bool) {
        let (filter, arguments) = Self.chatFilter(conversation: conversation, user: user)
        let (newestFirst, truncated) = try database.read { db -> ([ChatLine], Bool) in
            let rows = try Row.fetchCursor(db, sql: """
                SELECT id, time, conversation, user, role, source, text, confidence FROM chat
                    WHERE \(filter) AND id > ? ORDER BY id DESC LIMIT ?
                """, arguments: arguments + [after, limit])
            var lines: [ChatLine] = []
            var bytes = 0
            while let row = try rows.next() {
                let line = ChatLine(id: row["id"], time: row["time"], conversation: row["conversation"], user: row["user"],
                                    role: row["role"], source: row["source"], text: row["text"], confidence: row["confidence"])
                // The other members: about 150 bytes.
                bytes += line.text.utf8.count + line.conversation.utf8.count + line.source.utf8.count + 150
                if bytes > maxBytes, !lines.isEmpty { return (lines, true) }
                lines.append(line)
            }
            return (lines, false)
        }
        return (newestFirst.reversed(), truncated)
    }

    /// Whether a conversation has a line (of `user`, when given).
    public func chatExists(conversation: String, user: String? = nil) throws -> Bool {
        try !chat(conversation: conversation, user: user, limit: 1).isEmpty
    }

    /// A user's preferences as stored (a JSON object's text), nil when they set none.
    public func chatPreferences(user: String) throws -> String? {
        try database.read { db in try String.fetchOne(db, sql: "SELECT value FROM chat_preferences WHERE user = ?", arguments: [user]) }
    }

    /// The WHERE clause for lines of a conversation and/or a user (both nil: every line).
    static func chatFilter(conversation: String?, user: String?) -> (String, StatementArguments) {
        switch (conversation, user) {
        case let (conversation?, user?): return ("conversation = ? AND user = ?", [conversation, user])
        case let (conversation?, nil): return ("conversation = ?", [conversation])
        case let (nil, user?): return ("user = ?", [user])
        case (nil, nil): return ("1", [])
        }
    }
}
