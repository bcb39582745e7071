import AgentCore
import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// Schema v9 (issue 38 item 3): the events table loses its index on (time) alone, which cost
/// the writer a fifth of its time per event; a query on time alone is served by (type, time)
/// with a skip-scan. A store written by schema v8 opens, keeps its events and its page size.
@Suite(.ownThreads) struct EventIndexUpgradeTests {
    static let types = ["trade", "host_stats", "alert"]

    /// A store as schema v8 left it: 4 KiB pages, the three indexes, 300 events of three types
    /// one second apart, ending an hour ago (within the week the store keeps by default).
    static func oldStore(at path: String, end: Double) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        var configuration = Configuration()
        configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL") }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(queue, upTo: "v8-chat-users")
        try queue.write { db in
            for index in 0..<300 {
                try db.execute(sql: "INSERT INTO events (time, type, source, payload) VALUES (?, ?, 'old', ?)",
                               arguments: [end - Double(300 - index), types[index % 3], #"{"n":\#(index)}"#])
            }
        }
        #expect(try queue.read { try Self.indexes(of: $0) } == ["events_run", "events_time", "events_type_time"])
        try queue.close()
    }

    static func indexes(of db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'index' AND tbl_name = 'events' ORDER BY name")
    }

    static func plan(_ db: Database, _ sql: String, _ arguments: StatementArguments) throws -> String {
        try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { row -> String in row["detail"] ?? "" }.joined(separator: "; ")
    }

    @Test func aStoreFromSchemaV8LosesTheTimeIndexKeepsItsEventsAndServesTimeQueriesByTypeAndTime() throws {
        let folder = TestPaths.temporaryDirectory("events-v9-upgrade")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/.agent/data/agent.sqlite"
        let end = Date().timeIntervalSince1970 - 3_600
        try Self.oldStore(at: path, end: end)

        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        for index in 0..<30 { store.append(type: Self.types[index % 3], source: "new", time: end + Double(index + 1), payload: #"{"m":\#(index)}"#) }
        store.close()
        #expect(store.statistics.committed == 30 && store.statistics.dropped == 0)

        let reader = try StoreReader(path: path)
        try reader.database.read { (db: Database) throws in
            #expect(try Self.indexes(of: db) == ["events_run", "events_type_time"])
            // The old file keeps its page size (SQLite cannot change it in WAL without rewriting it).
            #expect(try Int.fetchOne(db, sql: "PRAGMA page_size") == 4096)
            #expect(try String.fetchOne(db, sql: "SELECT stat FROM sqlite_stat1 WHERE idx = 'events_type_time'") == StoreSchema.eventTypeTimeStatistics)
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM events") == 330)

            // Time alone: the last 100 s of the old events and the 30 new ones, by a skip-scan.
            let timeOnly = "SELECT count(*) FROM events WHERE time >= ?"
            #expect(try Int.fetchOne(db, sql: timeOnly, arguments: [end - 100]) == 130)
            let timePlan = try Self.plan(db, timeOnly, [end - 100])
            #expect(timePlan.contains("events_type_time") && timePlan.contains("ANY(type)"), "\(timePlan)")
            // A type and a time (a monitor's query): the index's range, as before.
            let typed = "SELECT count(*) FROM events WHERE type = ? AND time >= ?"
            #expect(try Int.fetchOne(db, sql: typed, arguments: ["alert", end - 99]) == 43)
            let typedPlan = try Self.plan(db, typed, ["alert", end - 99])
            #expect(typedPlan.contains("events_type_time (type=? AND time>?)"), "\(typedPlan)")
        }
        // What agent-control events reads: the newest, in order, old and new.
        let newest = try reader.events(types: [], since: nil, limit: 40, newest: true)
        #expect(newest.map(\.source) == Array(repeating: "old", count: 10) + Array(repeating: "new", count: 30))
        #expect(zip(newest, newest.dropFirst()).allSatisfy { $0.id < $1.id && $0.time < $1.time })
    }

    @Test func aNewStoreHasSixteenKiBPagesAndNoTimeIndex() throws {
        let folder = TestPaths.temporaryDirectory("events-v9-new")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        store.append(type: "tick", source: "clock", time: Date().timeIntervalSince1970, payload: "{}")
        store.close()
        try StoreReader(path: path).database.read { (db: Database) throws in
            #expect(try Int.fetchOne(db, sql: "PRAGMA page_size") == 16_384)
            #expect(try Self.indexes(of: db) == ["events_run", "events_type_time"])
            #expect(try Int.fetchOne(db, sql: "SELECT count(*) FROM events") == 1)
        }
    }
}

