import GRDB

/// What the feature stores of this file share: a read-only connection of their own, and the
/// retention of a table of records (finished ones only, by age and by count).
extension AgentStore {
    /// A read-only connection to the store at `path` (WAL mode lets it read beside the writer),
    /// waiting at most 5 s for a lock before failing.
    package static func readOnlyQueue(path: String) throws -> DatabaseQueue {
        configureSQLite()
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        return try DatabaseQueue(path: path, configuration: configuration)
    }

    /// Deletes the rows of `table` that `finished` selects (an SQL condition on its columns)
    /// whose `time` column is before `before` (nil: no age limit), then all but the newest
    /// `keeping` of them (by `row`; nil: no count limit). Returns how many went.
    package static func prune(_ table: String, finished: String = "1", time: String, before: Double?, keeping: Int?,
                              in db: Database) throws -> Int {
        var deleted = 0
        if let before {
            try db.execute(sql: "DELETE FROM \(table) WHERE \(finished) AND \(time) < ?", arguments: [before])
            deleted += db.changesCount
        }
        if let keeping {
            try db.execute(sql: """
                DELETE FROM \(table) WHERE \(finished) AND row <= (
                    SELECT row FROM \(table) WHERE \(finished) ORDER BY row DESC LIMIT 1 OFFSET ?)
                """, arguments: [keeping])
            deleted += db.changesCount
        }
        return deleted
    }
}
