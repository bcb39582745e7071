import AgentStore
import Foundation
import GRDB

/// A store laid out as schema v8 left it (before stop 51): 4 KiB pages and the index on
/// (time) alone, so that figure 5 measures the store before and after in one run, with the
/// same binary. The file is made before the store opens it (its page size is then kept), and
/// the index the store's v9 migration drops is made again once it has opened it.
enum LegacyStoreLayout {
    /// Creates the database at `path`: 4 KiB pages, WAL, the migrations up to v8.
    static func create(path: String) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL") }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(database, upTo: "v8-chat-users")
        try database.close()
    }

    /// Makes the index on (time) again and takes the planner's row for (type, time) away, on
    /// a connection of its own, while the store is open and before anything is written.
    static func restoreTimeIndex(path: String) throws {
        // The store's writer may hold its first transaction a moment: wait for it, not fail.
        var configuration = Configuration()
        configuration.busyMode = .timeout(10)
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try database.write { db in
            try db.execute(sql: "CREATE INDEX IF NOT EXISTS events_time ON events(time); DELETE FROM sqlite_stat1 WHERE tbl = 'events'")
        }
        try database.close()
    }
}
