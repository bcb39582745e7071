@testable import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Testing

/// The writer's multi-row statements and what they cost the disk.
@Suite(.ownThreads) struct EventInserterTests {
    /// Bytes the calling thread has passed to write calls (`wchar` of /proc/thread-self/io):
    /// the WAL's frames, and a statement journal's temporary file if SQLite keeps one.
    static func bytesWrittenByThisThread() throws -> Int {
        let text = try String(contentsOfFile: "/proc/thread-self/io", encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { $0.hasPrefix("wchar:") }, "no wchar in /proc/thread-self/io: \(text)")
        return try #require(Int(line.dropFirst("wchar:".count).trimmingCharacters(in: .whitespaces)))
    }

    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int) ?? 0
    }

    /// SQLite's default conflict action makes a statement of many rows journal every page it
    /// changes that existed before it (the indexes' insertion points, 16 KiB each), so that the
    /// statement alone can be undone: 8 × the WAL's bytes went to a temporary file. The
    /// writer rolls back its whole transaction on any error, so its statements need none.
    @Test func multiRowInsertsWriteTheWALAndNoStatementJournal() throws {
        let folder = TestPaths.temporaryDirectory("inserter-journal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            // No checkpoint, and a cache that holds the whole transaction: every byte this
            // thread writes is a WAL frame at the commit, or a journal.
            try db.execute(sql: """
                PRAGMA page_size = \(AgentStore.pageSize); PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL;
                PRAGMA wal_autocheckpoint = 0; PRAGMA cache_size = -131072
                """)
        }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(database)
        // Two types, as a feed's trades and a host's figures: two insertion points in the
        // (type, time) index, each an existing page that every statement changes.
        var pending = PendingEvents()
        let start = Date().timeIntervalSince1970
        for index in 0..<60_000 {
            let payload = Array(#"{"pair":"BTC-USD\#(index % 7)","price":\#(60_000 + index % 1_000).25,"qty":0.\#(index % 10_000),"seq":\#(index)}"#.utf8)
            payload.withUnsafeBytes {
                pending.append(type: index % 4 == 3 ? "host_stats" : "trade", source: "feed", time: start + Double(index) * 1e-6, payload: $0)
            }
        }
        let walBefore = Self.fileSize(path + "-wal")
        var written = 0
        for _ in 0..<3 {
            let chunks = pending.take(atLeast: 20_000)
            try database.inDatabase { db in
                // Read on the thread that runs the statements and the commit.
                let before = try Self.bytesWrittenByThisThread()
                try db.inTransaction {
                    try EventInserter.insert(chunks, in: db)
                    return .commit
                }
                written += try Self.bytesWrittenByThisThread() - before
            }
        }
        let walGrowth = Self.fileSize(path + "-wal") - walBefore
        let rows = try database.read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") }
        #expect(rows == 60_000)
        #expect(walGrowth > 0)
        // The WAL's frames, each written once (with a statement journal: 8 ×).
        #expect(written <= walGrowth + walGrowth / 4, "the inserts wrote \(written) bytes for \(walGrowth) bytes of WAL")
    }
}
