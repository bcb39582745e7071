import Foundation
import GRDB

extension AgentStore {
    /// Rows one statement of the retention deletes at most, so that the writer never holds the
    /// database for long.
    static let retentionChunk = 10_000
    /// Seconds a pass works at most before the writer takes what was queued meanwhile: a first
    /// pass over millions of events held every write (a new workflow run waited 9.7 s).
    static let retentionSlice = 0.1

    /// Deletes events beyond the retention limits (age, count, then the database's size), and
    /// finished runs beyond theirs. On the writer's thread. The newest event is never deleted:
    /// SQLite numbers a row of an empty table 1, so ids would start over and a follower's
    /// `after` cursor would skip every event until the ids passed it again.
    /// Returns false when it stopped at ``retentionSlice`` with more to delete (the caller
    /// writes what waits, then comes back).
    func enforceRetention(sizeWarned: inout Bool) -> Bool {
        let until = Date().addingTimeInterval(Self.retentionSlice)
        do {
            if let age = settings.maximumAge {
                let cutoff = Date().timeIntervalSince1970 - age
                // By the (type, time) index (`+id` keeps the planner off the rowid, and no ORDER
                // BY off a sort): when nothing is old it is a seek per type, not a scan of the
                // table — at every slice of a pass.
                guard try deleteEventsInChunks(until: until, { db in
                    try db.execute(sql: """
                        DELETE FROM events WHERE id IN
                        (SELECT id FROM events WHERE time < ? AND +id < (SELECT max(id) FROM events) LIMIT \(Self.retentionChunk))
                        """, arguments: [cutoff])
                }) else { return false }
            }
            if let limit = settings.maximumEvents {
                guard try deleteEventsInChunks(until: until, { db in
                    let newest = try Int.fetchOne(db, sql: "SELECT max(id) FROM events") ?? 0
                    try db.execute(sql: "DELETE FROM events WHERE id IN (SELECT id FROM events WHERE id <= ? ORDER BY id LIMIT \(Self.retentionChunk))",
                                   arguments: [newest - limit])
                }) else { return false }
            }
            if let limit = settings.maximumBytes, try !enforceSize(limit, until: until, warned: &sizeWarned) { return false }
            // Lines of the journal past the mark may name runs written since (on the writer thread, where it is pinned).
            let keepsRuns = runJournal.keepsRunsFromPruning
            let pruned = try database.write { db in
                let cutoff = settings.maximumAge.map { Date().timeIntervalSince1970 - $0 }
                _ = try SQLiteScheduleStore.prune(before: cutoff, keeping: settings.maximumRuns, in: db)
                if keepsRuns { return 0 }
                _ = try SQLiteWorkflowStore.prune(before: cutoff, keeping: settings.maximumRuns, in: db)
                return try SQLiteRunStore.prune(endedBefore: cutoff, keeping: settings.maximumRuns, in: db)
            }
            // Last: a pass is over once the figure is set (tests that hold the database wait for it).
            let inUse = try database.read(Self.bytesInUse)
            queued.withLock { queued in
                queued.stats.expiredRuns += pruned
                queued.stats.bytesInUse = inUse
            }
        } catch {
            degrade(error)
        }
        return true
    }

    /// Runs `delete` (one chunk, a transaction each) until it deletes less than a chunk (true),
    /// or `until` passes with more to delete (false).
    private func deleteEventsInChunks(until: Date, _ delete: (Database) throws -> Void) throws -> Bool {
        var deleted = 0
        repeat {
            if Date() >= until { return false }
            deleted = try database.write { db in
                try delete(db)
                return db.changesCount
            }
            queued.withLock { $0.stats.expired += deleted }
        } while deleted == Self.retentionChunk
        return true
    }

    /// The bytes of the database's pages in use (its free pages apart: new rows take them
    /// before the file grows).
    static func bytesInUse(_ db: Database) throws -> Int {
        try Int.fetchOne(db, sql: "SELECT (page_count - freelist_count) * page_size FROM pragma_page_count, pragma_freelist_count, pragma_page_size") ?? 0
    }

    /// Deletes the oldest events while the pages in use pass `limit`. A row's size says only
    /// roughly what deleting it frees (a 10 KB row alone on a 16 KB page frees 16 KB; rows that
    /// share a page with newer ones free none yet), so each transaction deletes what the excess
    /// takes at the rate the last one freed (at first half of it), then counts the pages again.
    /// Returns false when `until` passed with the pages still over the limit.
    private func enforceSize(_ limit: Int, until: Date, warned: inout Bool) throws -> Bool {
        var freedPerByte = 2.0
        while true {
            if Date() >= until { return false }
            let (inUse, deleted, freed, estimated) = try database.write { db -> (Int, Int, Int, Int) in
                let inUse = try Self.bytesInUse(db)
                guard inUse > limit else { return (inUse, 0, 0, 0) }
                // A row's cost: its payload, its type and time in two indexes, its other columns.
                let rows = try Row.fetchCursor(db, sql: """
                    SELECT id, length(payload) + 2 * length(type) + length(source) + 48 FROM events
                    WHERE id < (SELECT max(id) FROM events) ORDER BY id LIMIT \(Self.retentionChunk)
                    """)
                let wanted = Double(inUse - limit) / freedPerByte
                var estimated = 0, last: Int64?
                while Double(estimated) < wanted, let row = try rows.next() {
                    last = row[0]
                    estimated += row[1] as Int
                }
                guard let last else { return (inUse, 0, 0, 0) }
                try db.execute(sql: "DELETE FROM events WHERE id <= ?", arguments: [last])
                return (inUse, db.changesCount, inUse - (try Self.bytesInUse(db)), estimated)
            }
            queued.withLock { $0.stats.expired += deleted }
            if inUse <= limit || (deleted > 0 && inUse - freed <= limit) {
                warned = false
                return true
            }
            if deleted == 0 {
                if !warned {
                    logger.warning("""
                        store: \(path) holds \(inUse) bytes in use, more than retention.max_bytes (\(limit)), with no event left to delete but the \
                        newest (kept so that event ids only grow): runs, memory, chat and history are kept. Raise max_bytes, or lower max_runs or max_age.
                        """)
                }
                warned = true
                return true
            }
            freedPerByte = min(100, max(0.1, Double(freed) / Double(max(1, estimated))))
        }
    }
}
