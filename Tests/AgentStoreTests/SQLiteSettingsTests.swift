@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import GRDBSQLite
import Testing

/// SQLite's process-wide settings hold only in a process whose first connection is the
/// store's, so each check runs in a process of its own.
@Suite(.ownThreads) struct SQLiteSettingsTests {
    @Test func aProcessWhoseFirstConnectionIsTheStoresKeepsNoMemoryStatistics() async {
        await #expect(processExitsWith: .success) {
            guard AgentStore.configureSQLite() else { exit(2) }
            let queue = try! DatabaseQueue()
            try! queue.write { db in
                try db.execute(sql: "CREATE TABLE blobs (data BLOB); INSERT INTO blobs VALUES (randomblob(200000))")
            }
            // With the statistics on, this counts every byte SQLite holds (the schema, the cache).
            exit(sqlite3_memory_used() == 0 ? EXIT_SUCCESS : 3)
        }
    }
}
