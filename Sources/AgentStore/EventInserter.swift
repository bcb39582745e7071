import AgentCore
import GRDB
import GRDBSQLite

/// Inserts the writer's pending events, the hot path of the store: multi-row `INSERT`s bound
/// with SQLite directly, no intermediate values. Within one statement SQLite keeps its cursors
/// on the table and its indexes open from row to row, so a row whose index key follows the
/// last one's (the same type, a later time) is placed without a descent from the root: 128
/// rows a statement cost about half the CPU of one row a statement with the events table's
/// indexes (agent-bench figure 5's floor rows; benchmarks/HISTORY.md, stop 50).
enum EventInserter {
    /// Rows per statement, largest first: a chunk's events are inserted in as many of the
    /// largest as fit, then the next size, down to single rows.
    static let sizes = [128, 32, 8, 1]
    static let columns: Int32 = 5

    /// `OR ROLLBACK` (every size, for one behaviour): a row that breaks a constraint ends the
    /// whole transaction, as an I/O error (a full disk) midway does without a statement
    /// journal, and the writer rolls back on any error anyway. With SQLite's default (`ABORT`)
    /// a statement of many rows keeps a statement journal, the original of every page it
    /// changes, so that it can be undone alone: the indexes' hot pages, 16 KiB each, written to
    /// a temporary file at every statement, 8 × the bytes the WAL gets (`EventInserterTests`;
    /// benchmarks/HISTORY.md, stop 74).
    static func sql(rows: Int) -> String {
        "INSERT OR ROLLBACK INTO events (time, type, source, payload, run_id) VALUES "
            + Array(repeating: "(?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
    }

    private static let statementsSQL = sizes.map(sql(rows:))

    /// Inserts `chunks` in order (in the caller's transaction).
    static func insert(_ chunks: [PendingEvents.Chunk], in db: Database) throws {
        guard !chunks.isEmpty else { return }
        let statements = try statementsSQL.map { try db.cachedStatement(sql: $0).sqliteStatement }
        // Payloads are bound without a copy: no binding may outlive its chunk's buffer.
        defer { for statement in statements { sqlite3_clear_bindings(statement) } }
        for chunk in chunks {
            switch chunk {
            case .singles(let singles):
                try singles.bytes.withUnsafeBytes { bytes in
                    var index = 0
                    try insert(singles.items.count, with: statements, in: db) { statement, column in
                        let item = singles.items[index]
                        index += 1
                        bind(statement, column, time: item.time, type: item.type, source: item.source,
                             payload: UnsafeRawBufferPointer(rebasing: bytes[item.start..<item.end]))
                    }
                }
            case .run(let run):
                try run.entries.withUnsafeBytes { entries in
                    var offset = 0
                    // The entries were checked when copied; counted again, so that the rows bound are always there.
                    try insert(wellFormedEntries(entries, upTo: run.count), with: statements, in: db) { statement, column in
                        guard let entry = EventFrame.runEntry(entries, at: offset) else { return }
                        offset = entry.next
                        bind(statement, column, time: Double(entry.time) / 1e9, type: run.type, source: run.source, payload: entry.payload)
                    }
                }
            }
        }
    }

    /// Inserts `count` rows, each bound by `bindRow` (statement, first column), in the largest
    /// statements that fit.
    private static func insert(_ count: Int, with statements: [OpaquePointer?], in db: Database,
                               bindRow: (OpaquePointer?, Int32) -> Void) throws {
        var left = count
        for (size, statement) in zip(sizes, statements) {
            while left >= size {
                for row in 0..<Int32(size) { bindRow(statement, row * columns + 1) }
                let code = sqlite3_step(statement)
                sqlite3_reset(statement)
                guard code == SQLITE_DONE else {
                    throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection)))
                }
                left -= size
            }
        }
    }

    /// Binds one event to the five columns from `column`; type, source and run id are copied
    /// by SQLite (into buffers it reuses), the payload is not.
    @inline(__always)
    private static func bind(_ statement: OpaquePointer?, _ column: Int32, time: Double, type: String, source: String, payload: UnsafeRawBufferPointer) {
        sqlite3_bind_double(statement, column, time)
        bindText(statement, column + 1, type)
        bindText(statement, column + 2, source)
        if let base = payload.baseAddress {
            sqlite3_bind_text(statement, column + 3, base.assumingMemoryBound(to: CChar.self), Int32(payload.count), nil)
        } else {
            sqlite3_bind_text(statement, column + 3, "", 0, EventRunID.transient)
        }
        if let run = EventRunID.of(payload) {
            sqlite3_bind_text(statement, column + 4, run, -1, EventRunID.transient)
        } else {
            sqlite3_bind_null(statement, column + 4)
        }
    }

    @inline(__always)
    private static func bindText(_ statement: OpaquePointer?, _ column: Int32, _ text: String) {
        var text = text
        _ = text.withUTF8 { utf8 in
            guard let base = utf8.baseAddress, utf8.count > 0 else { return sqlite3_bind_text(statement, column, "", 0, EventRunID.transient) }
            return sqlite3_bind_text(statement, column, UnsafeRawPointer(base).assumingMemoryBound(to: CChar.self), Int32(utf8.count), EventRunID.transient)
        }
    }

    /// How many of the first `count` entries are well-formed `event` frames.
    private static func wellFormedEntries(_ entries: UnsafeRawBufferPointer, upTo count: Int) -> Int {
        var found = 0, offset = 0
        while found < count, let entry = EventFrame.runEntry(entries, at: offset) {
            found += 1
            offset = entry.next
        }
        return found
    }
}
