import AgentStore
import JSONSchema

/// A conversation summed up without a model, from its lines: when, who, how many messages,
/// the topics (the adapters that answered), the alerts raised and the actions taken (the
/// `llm` adapter's tool calls and their outcome).
package struct ChatSummary: Encodable, Sendable, Equatable {
    package struct Topic: Encodable, Sendable, Equatable {
        /// The adapter that answered.
        package var adapter: String
        package var messages: Int
    }

    package struct Alert: Encodable, Sendable, Equatable {
        package var time: String
        package var source: String
        package var text: String
    }

    package struct Action: Encodable, Sendable, Equatable {
        package var time: String
        /// The command the tool ran.
        package var tool: String
        package var user: String?
        /// `ok` or `error`.
        package var outcome: String
        /// The answer's gist or the error's message.
        package var detail: String
    }

    package var first: String?
    package var last: String?
    /// The people who wrote in it.
    package var users: [String]
    /// Lines by role: `user`, `bot`, `alert`, `tool`.
    package var messages: [String: Int]
    package var topics: [Topic]
    /// The newest 20.
    package var alerts: [Alert]
    /// The newest 50.
    package var actions: [Action]

    package init(_ lines: [ChatLine]) {
        first = lines.first.map { StoreReader.StoredEvent.iso($0.time) }
        last = lines.last.map { StoreReader.StoredEvent.iso($0.time) }
        var users: [String] = []
        var messages: [String: Int] = [:]
        var topics: [String: Int] = [:]
        for line in lines {
            messages[line.role, default: 0] += 1
            if line.role == "user", let user = line.user, !users.contains(user) { users.append(user) }
            if line.role == "bot", !line.source.isEmpty { topics[line.source, default: 0] += 1 }
        }
        self.users = users
        self.messages = messages
        self.topics = topics.map { Topic(adapter: $0.key, messages: $0.value) }.sorted { ($0.messages, $1.adapter) > ($1.messages, $0.adapter) }
        alerts = lines.filter { $0.role == "alert" }.suffix(20).map { Alert(time: StoreReader.StoredEvent.iso($0.time), source: $0.source, text: $0.text) }
        actions = lines.filter { $0.role == "tool" }.suffix(50).map { line in
            let failed = line.text.hasPrefix("error: ")
            return Action(time: StoreReader.StoredEvent.iso(line.time), tool: line.source, user: line.user, outcome: failed ? "error" : "ok",
                          detail: String((failed ? line.text.dropFirst(7) : line.text[...]).prefix(500)))
        }
    }

    /// The summary in a few sentences, for people (and the CLI).
    package var text: String {
        guard let first, let last else { return "Nothing was said in this conversation." }
        let total = messages.values.reduce(0, +)
        var sentences = ["\(total) message(s) from \(first) to \(last)" + (users.isEmpty ? "." : ", from \(users.joined(separator: ", ")).")]
        if !topics.isEmpty {
            sentences.append("Topics: " + topics.map { "\($0.adapter) (\($0.messages))" }.joined(separator: ", ") + ".")
        }
        if !alerts.isEmpty {
            sentences.append("\(alerts.count) alert(s), the last from \(alerts[alerts.count - 1].source): \(alerts[alerts.count - 1].text)")
        }
        if !actions.isEmpty {
            let failed = actions.filter { $0.outcome == "error" }.count
            sentences.append("Actions: " + actions.map { "\($0.tool) (\($0.outcome))" }.joined(separator: ", ") + (failed > 0 ? "; \(failed) failed." : "."))
        }
        return sentences.joined(separator: " ")
    }
}
