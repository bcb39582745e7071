import AgentWork
import Dispatch
import GRDB
import Logging

/// The assignment choices in the agent's SQLite store (table `assignment`, migration
/// v5-assignment): written on a serial queue of their own through the store's writer
/// connection (rare: an operator's command), read once at start.
package final class SQLiteAssignmentStore: AssignmentStore {
    package let store: AgentStore
    package let logger: Logger
    private let queue = DispatchQueue(label: "agentruntime.assignment-store")

    package init(store: AgentStore, logger: Logger) {
        self.store = store
        self.logger = logger
    }

    package func load() throws -> [String: String] {
        try store.withWriter { db in
            var values: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT key, value FROM assignment") { values[row["key"]] = row["value"] }
            return values
        }
    }

    package func save(key: String, value: String?) {
        let store = store, logger = logger
        queue.async {
            do {
                try store.withWriter { db in
                    if let value {
                        try db.execute(sql: "INSERT INTO assignment (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                                       arguments: [key, value])
                    } else {
                        try db.execute(sql: "DELETE FROM assignment WHERE key = ?", arguments: [key])
                    }
                }
            } catch {
                logger.error("assignment: cannot keep \(key) in the store (\(error)); the change holds until the agent stops")
            }
        }
    }

    /// Waits until every save asked so far is written (tests, the agent's stop).
    package func flush() { queue.sync {} }
}
