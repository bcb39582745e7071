import AgentCore
import AgentLoop
import AgentSupervision
import CAgentSystem
import Foundation
import GRDB
import GRDBSQLite
import JSONSchema
import Logging
import Synchronization

/// Runs monitors' periodic queries on its own thread and read-only connection, so that a slow
/// query never holds up routing; results go back to the supervisor's loop. Each query is
/// stopped past ``longestQuery`` and its result past ``largestResult``: a module's endless
/// recursive query held the thread (and every later query) until the agent stopped, and one of
/// two million rows took the supervisor's memory past a gigabyte.
package final class QueryRunner: Sendable {
    private let database: DatabaseQueue
    /// When the query running now is interrupted (``EventLoop/now()`` in microseconds; max: none runs).
    private let deadline = QueryDeadline()
    /// Seconds this runner lets a query run (``longestQuery`` unless a test says).
    private let longestQuery: Double
    private let logger: Logger
    private let state = Guarded(Waiting())
    private let deliver: @Sendable (PlannedQuery, JSONValue) -> Void

    /// A query run for a caller, and whom to answer.
    private struct Job: Sendable {
        var sql: String
        var params: [JSONValue]
        var done: @Sendable (Result<JSONValue, QueryProblem>) -> Void
    }

    /// What the runner's thread waits for.
    private struct Waiting: Sendable {
        var schedule: [(query: PlannedQuery, due: Double)] = []
        var stopped = false
        var jobs: [Job] = []

        /// When the thread is to look again (nil: now, there is work or it stops).
        var wake: Date? {
            if stopped || !jobs.isEmpty { return nil }
            let now = Date().timeIntervalSince1970
            let next = schedule.map(\.due).min() ?? now + 3600
            return next <= now ? nil : Date(timeIntervalSince1970: next)
        }

        /// The jobs, and the periodic queries that are due (each due again a period later).
        mutating func take() -> (jobs: [Job], due: [PlannedQuery]) {
            let taken = jobs
            jobs = []
            var due: [PlannedQuery] = []
            let now = Date().timeIntervalSince1970
            for index in schedule.indices where schedule[index].due <= now {
                due.append(schedule[index].query)
                schedule[index].due = max(schedule[index].due + schedule[index].query.every, now + 0.001)
            }
            return (taken, due)
        }
    }

    /// `deliver` receives each result (a `{"name", "since", "until", "rows"}` object) on the
    /// runner's thread.
    package init(storePath: String, logger: Logger, longestQuery: Double = QueryRunner.longestQuery,
                 deliver: @escaping @Sendable (PlannedQuery, JSONValue) -> Void) throws {
        database = try AgentStore.readOnlyQueue(path: storePath)
        self.longestQuery = longestQuery
        self.logger = logger
        let context = Unmanaged.passUnretained(deadline).toOpaque()
        database.inDatabase { db in
            // Every 10,000 steps of SQLite's machine (a fraction of a millisecond): a non-zero
            // answer interrupts the statement (SQLITE_INTERRUPT).
            sqlite3_progress_handler(db.sqliteConnection, 10_000, { context in
                guard let context else { return 0 }
                let deadline = Unmanaged<QueryDeadline>.fromOpaque(context).takeUnretainedValue()
                return QueryDeadline.now() > deadline.until.load(ordering: .relaxed) ? 1 : 0
            }, context)
            // No value larger than a result may hold is made at all: `zeroblob(900000000)` took
            // the supervisor to 1.8 GB before the result's bound saw it.
            sqlite3_limit(db.sqliteConnection, SQLITE_LIMIT_LENGTH, Int32(Self.largestResult))
            // A pragma that sets something (cache_size, mmap_size, query_only…) would change the
            // one connection every module's queries share: refused; reading one is allowed.
            sqlite3_set_authorizer(db.sqliteConnection, { _, action, _, value, _, _ in
                action == SQLITE_PRAGMA && value != nil ? SQLITE_DENY : SQLITE_OK
            }, nil)
        }
        self.deliver = deliver
        if let refused = SystemThread.run(Self.threadName, { [self] in runLoop() }) {
            throw StoreOpenError("cannot start the store's queries: \(refused)")
        }
    }

    /// Seconds a query may run.
    package static let longestQuery = 10.0
    /// Bytes of values a result may hold (about its JSON's size; a worker's frame is at most 16 MiB).
    package static let largestResult = 4 << 20

    /// The query thread's name (ps, /proc/PID/task/TID/comm).
    package static let threadName = "agent-queries"

    /// Replaces the set of queries (at start and after a reload).
    package func setQueries(_ queries: [PlannedQuery]) {
        let now = Date().timeIntervalSince1970
        state.withLock { $0.schedule = queries.filter { $0.every > 0 }.map { ($0, now + $0.every) } }
        state.signal()
    }

    /// Runs one read-only query (for a worker's `query` callback or a control command); `done`
    /// runs on the runner's thread.
    package func submit(sql: String, params: [JSONValue], done: @escaping @Sendable (Result<JSONValue, QueryProblem>) -> Void) {
        state.withLock { $0.jobs.append(Job(sql: sql, params: params, done: done)) }
        state.signal()
    }

    package func stop() {
        state.withLock { $0.stopped = true }
        state.signal()
    }

    /// The most statements of callers' queries kept compiled (a worker asks the same few
    /// queries again and again: the chat's history for each message); past it they start over.
    static let maximumStatements = 64

    private func runLoop() {
        agent_set_thread_name(Self.threadName)
        // Only this thread uses them, with the runner's one connection.
        var statements: [String: Statement] = [:]
        while true {
            let (work, stopped) = state.withLock(waitingUntil: \.wake) { ($0.take(), $0.stopped) }
            if stopped { return }
            for job in work.jobs { job.done(runJob(job.sql, job.params, statements: &statements)) }
            for query in work.due { run(query) }
        }
    }

    private func run(_ query: PlannedQuery) {
        let now = Date().timeIntervalSince1970
        do {
            let rows = try bounded {
                try database.read { db -> [JSONValue] in
                    let statement = try db.cachedStatement(sql: query.sql)
                    return try Self.rows(statement, query.arguments(for: statement, now: now))
                }
            }
            deliver(query, ["name": .string(query.name), "since": .number(JSONNumber(now - query.window)),
                            "until": .number(JSONNumber(now)), "rows": .array(rows)])
        } catch {
            logger.error("query \"\(query.name)\" failed: \(error)", metadata: ["process": "\(query.process)"])
        }
    }

    private func runJob(_ sql: String, _ params: [JSONValue], statements: inout [String: Statement]) -> Result<JSONValue, QueryProblem> {
        do {
            return .success(try bounded { try database.read { db -> JSONValue in
                let statement: Statement
                if let compiled = statements[sql] {
                    statement = compiled
                } else {
                    statement = try db.makeStatement(sql: sql)
                    guard statement.isReadonly else { throw QueryProblem("only read-only queries (SELECT) are allowed") }
                    if statements.count >= Self.maximumStatements { statements.removeAll() }
                    statements[sql] = statement
                }
                let arguments = StatementArguments(params.map { value -> DatabaseValue in
                    switch value {
                    case .string(let s): return s.databaseValue
                    case .number(let n): return n.intValue.map { $0.databaseValue } ?? n.doubleValue.databaseValue
                    case .bool(let b): return b.databaseValue
                    default: return .null
                    }
                })
                return .array(try Self.rows(statement, arguments))
            } })
        } catch let problem as QueryProblem {
            return .failure(problem)
        } catch let error as DatabaseError {
            return .failure(QueryProblem(error.message ?? "\(error)"))
        } catch {
            return .failure(QueryProblem("\(error)"))
        }
    }

    /// Runs `body` under the deadline of one query; an interrupted one is said so.
    private func bounded<T>(_ body: () throws -> T) throws -> T {
        deadline.until.store(QueryDeadline.now() + UInt64(longestQuery * 1e6), ordering: .relaxed)
        defer { deadline.until.store(.max, ordering: .relaxed) }
        do {
            return try body()
        } catch let error as DatabaseError where error.resultCode == .SQLITE_INTERRUPT {
            throw QueryProblem("the query ran for more than \(ProcessPolicy.format(longestQuery)) s and was stopped: narrow it (a shorter window, a LIMIT, a column with an index)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_TOOBIG {
            throw QueryProblem("a value of the query's result is over \(Self.largestResult >> 20) MiB: narrow it (substr(), fewer columns)")
        } catch let error as DatabaseError where error.resultCode == .SQLITE_AUTH {
            throw QueryProblem("a query may read a pragma, not set one: the connection is shared by every module's queries")
        }
    }

    /// The rows of `statement`, refused past ``largestResult`` bytes of values.
    private static func rows(_ statement: Statement, _ arguments: StatementArguments) throws -> [JSONValue] {
        var rows: [JSONValue] = []
        var bytes = 0
        let cursor = try Row.fetchCursor(statement, arguments: arguments)
        while let row = try cursor.next() {
            for (column, value) in row {
                bytes += column.utf8.count + 8
                switch value.storage {
                case .string(let text): bytes += text.utf8.count
                case .blob(let data): bytes += data.count
                default: break
                }
            }
            if bytes > largestResult {
                throw QueryProblem("the query's result is over \(largestResult >> 20) MiB (\(rows.count) rows read): narrow it (a LIMIT, fewer columns, an aggregate)")
            }
            rows.append(json(row))
        }
        return rows
    }

    package static func json(_ row: Row) -> JSONValue {
        var object = JSONObject()
        for (column, value) in row {
            switch value.storage {
            case .null: object[column] = .null
            case .int64(let i): object[column] = .number(JSONNumber(Int(i)))
            case .double(let d): object[column] = .number(JSONNumber(d))
            case .string(let s): object[column] = .string(s)
            case .blob(let b): object[column] = .string(String(decoding: b, as: UTF8.self))
            }
        }
        return .object(object)
    }
}

/// The deadline of the query the runner's thread runs, read by SQLite's progress handler.
private final class QueryDeadline: Sendable {
    let until = Atomic<UInt64>(.max)

    /// The loop's clock, in microseconds.
    static func now() -> UInt64 { UInt64(EventLoop.now() * 1e6) }
}
