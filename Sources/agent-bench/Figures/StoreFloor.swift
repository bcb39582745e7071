import AgentStore
import Foundation
import GRDB
import GRDBSQLite

/// Figure 5's floor: what SQLite itself does with the same events, on the bench's thread, no
/// runtime: a new database as the store makes one (its page size, WAL, synchronous=normal), a
/// prepared INSERT OR ROLLBACK bound with the C API, 20,000 rows a transaction.
enum StoreFloor {
    enum Layout: CaseIterable {
        /// The store's schema (its migrations: the events table and its indexes), one row a
        /// statement: what the store's writer did before stop 50.
        case storeSchema
        /// The store's schema, 128 rows a statement (what the writer does now).
        case storeSchemaMultiRow
        /// The same with SQLite's default conflict action (`ABORT`), which keeps a statement
        /// journal for every statement of many rows: the writer's statements before stop 74.
        case storeSchemaMultiRowStatementJournal
        /// The same with SQLite's 4 KiB pages: a new store's page size before stop 52.
        case storeSchemaMultiRowSmallPages
        /// The events table without any index, one row a statement.
        case bareTable
        /// The events table without any index, 128 rows a statement: the floor of the writer's shape.
        case bareTableMultiRow
        /// The events table with one index alone, 128 rows a statement: what each index costs
        /// (its CPU per row less the bare table's). The three of schema v8, spelled out here so
        /// that the rows stay comparable whatever the migrations drop.
        case typeTimeIndex
        case timeIndex
        case runIndex

        var label: String {
            switch self {
            case .storeSchema: "floor: SQLite, the store's schema, 1 row a statement"
            case .storeSchemaMultiRow: "floor: SQLite, the store's schema, 128 rows a statement"
            case .storeSchemaMultiRowStatementJournal: "  the same with a statement journal (INSERT without OR ROLLBACK, the writer's before stop 74)"
            case .storeSchemaMultiRowSmallPages: "  the same with 4 KiB pages (a new store's before stop 52)"
            case .bareTable: "floor: SQLite, the events table without indexes, 1 row a statement"
            case .bareTableMultiRow: "floor: SQLite, the events table without indexes, 128 rows a statement"
            case .typeTimeIndex: "  the events table + (type, time) alone, 128 rows a statement"
            case .timeIndex: "  the events table + (time) alone, 128 rows a statement"
            case .runIndex: "  the events table + (run_id, id) WHERE run_id IS NOT NULL alone, 128 rows a statement"
            }
        }

        var rowsPerStatement: Int { self == .storeSchema || self == .bareTable ? 1 : 128 }

        var pageSize: Int { self == .storeSchemaMultiRowSmallPages ? 4096 : AgentStore.pageSize }

        /// The index of the events table laid out alone (nil: none, or the store's migrations).
        var index: String? {
            switch self {
            case .typeTimeIndex: "CREATE INDEX events_type_time ON events(type, time)"
            case .timeIndex: "CREATE INDEX events_time ON events(time)"
            case .runIndex: "CREATE INDEX events_run ON events(run_id, id) WHERE run_id IS NOT NULL"
            default: nil
            }
        }

        var migrated: Bool {
            self == .storeSchema || self == .storeSchemaMultiRow || self == .storeSchemaMultiRowStatementJournal || self == .storeSchemaMultiRowSmallPages
        }

        /// `OR ROLLBACK` as the writer's statements (see `EventInserter.sql`); the default
        /// (`ABORT`) makes a statement of many rows keep a journal of the pages it changes.
        var conflict: String { self == .storeSchemaMultiRowStatementJournal ? "" : " OR ROLLBACK" }
    }

    struct Outcome {
        var rowsPerSecond: Double
        var cpuMicrosecondsPerRow: Double
    }

    static let transaction = 20_000

    /// Inserts `events` into a new database at `path` laid out as `layout`.
    static func run(_ layout: Layout, events: [(type: String, source: String, time: Double, payload: [UInt8], pair: Int?)], path: String) throws -> Outcome {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA page_size = \(layout.pageSize); PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(try AgentStore.checkpointPages(db))")
        }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        if layout.migrated {
            try StoreSchema.migrator.migrate(database)
        } else {
            try database.write { db in
                try db.execute(sql: "CREATE TABLE events (id INTEGER PRIMARY KEY, time REAL NOT NULL, type TEXT NOT NULL, source TEXT NOT NULL, payload TEXT NOT NULL, run_id TEXT)")
                if let index = layout.index { try db.execute(sql: index) }
            }
        }
        let rows = layout.rowsPerStatement
        let sql = "INSERT\(layout.conflict) INTO events (time, type, source, payload, run_id) VALUES " + Array(repeating: "(?, ?, ?, ?, ?)", count: rows).joined(separator: ", ")
        let cpuStart = threadCPU()
        let start = Clock.now()
        try database.inDatabase { db in
            // Kept: the SQLite statement lives as long as its GRDB statement.
            let prepared = try db.makeStatement(sql: sql)
            let statement = prepared.sqliteStatement
            var next = 0
            while next < events.count {
                let end = min(events.count, next + transaction)
                try db.inTransaction {
                    while next + rows <= end {
                        for row in 0..<rows { bind(events[next + row], to: statement, at: Int32(row * 5 + 1)) }
                        let code = sqlite3_step(statement)
                        sqlite3_reset(statement)
                        if code != SQLITE_DONE { throw BenchError("floor insert: \(String(cString: sqlite3_errmsg(db.sqliteConnection)))") }
                        next += rows
                    }
                    return .commit
                }
                if next + rows > events.count { break }
            }
            withExtendedLifetime(prepared) {}
        }
        let seconds = Clock.now() - start
        let inserted = events.count / rows * rows
        return Outcome(rowsPerSecond: Double(inserted) / seconds, cpuMicrosecondsPerRow: Double(threadCPU() - cpuStart) / 1000 / Double(inserted))
    }

    /// One event a transaction with synchronous=full, as acknowledged work commits (a task
    /// request, a published event): what a page size costs a small commit (each commit writes
    /// the pages it touches to the WAL, whole, and waits for fsync).
    static func singleCommits(pageSize: Int, events: [(type: String, source: String, time: Double, payload: [UInt8], pair: Int?)], path: String) throws -> Outcome {
        var configuration = Configuration()
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA page_size = \(pageSize); PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL")
            try db.execute(sql: "PRAGMA wal_autocheckpoint = \(try AgentStore.checkpointPages(db))")
        }
        let database = try DatabaseQueue(path: path, configuration: configuration)
        try StoreSchema.migrator.migrate(database)
        let sql = "INSERT INTO events (time, type, source, payload, run_id) VALUES (?, ?, ?, ?, ?)"
        let cpuStart = threadCPU()
        let start = Clock.now()
        try database.inDatabase { db in
            let prepared = try db.makeStatement(sql: sql)
            let statement = prepared.sqliteStatement
            for event in events {
                try db.inTransaction {
                    bind(event, to: statement, at: 1)
                    let code = sqlite3_step(statement)
                    sqlite3_reset(statement)
                    if code != SQLITE_DONE { throw BenchError("floor commit: \(String(cString: sqlite3_errmsg(db.sqliteConnection)))") }
                    return .commit
                }
            }
            withExtendedLifetime(prepared) {}
        }
        let seconds = Clock.now() - start
        return Outcome(rowsPerSecond: Double(events.count) / seconds, cpuMicrosecondsPerRow: Double(threadCPU() - cpuStart) / 1000 / Double(events.count))
    }

    /// SQLite copies each text (into buffers it reuses), so no binding outlives its bytes.
    private static func bind(_ event: (type: String, source: String, time: Double, payload: [UInt8], pair: Int?), to statement: OpaquePointer?, at column: Int32) {
        let transient = unsafeBitCast(-1, to: sqlite3_destructor_type.self)
        sqlite3_bind_double(statement, column, event.time)
        sqlite3_bind_text(statement, column + 1, event.type, -1, transient)
        sqlite3_bind_text(statement, column + 2, event.source, -1, transient)
        _ = event.payload.withUnsafeBytes { sqlite3_bind_text(statement, column + 3, $0.baseAddress?.assumingMemoryBound(to: CChar.self), Int32($0.count), transient) }
        sqlite3_bind_null(statement, column + 4)
    }

    private static func threadCPU() -> Int64 {
        var time = timespec()
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
        return Int64(time.tv_sec) * 1_000_000_000 + Int64(time.tv_nsec)
    }
}
