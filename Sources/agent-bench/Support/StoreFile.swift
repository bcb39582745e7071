import Foundation
import GRDB

/// An agent's store file opened for reading only, the way the runtime's periodic queries and
/// `agent-control events` open it (GRDB `DatabaseQueue`, read-only, busy timeout 5 s; WAL lets
/// it read beside the agent's writer). The bench counts what a run left in the event log and
/// times queries with it.
struct StoreFile {
    let database: DatabaseQueue

    init(path: String) throws {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(5)
        database = try DatabaseQueue(path: path, configuration: configuration)
    }

    /// A value bound to a named parameter.
    enum Argument {
        case text(String)
        case real(Double)

        var databaseValue: any DatabaseValueConvertible {
            switch self {
            case .text(let text): text
            case .real(let number): number
            }
        }
    }

    static func statementArguments(_ arguments: [String: Argument]) -> StatementArguments {
        StatementArguments(arguments.mapValues { $0.databaseValue })
    }

    /// Rows of the events table whose type is one of `types`.
    static func countEvents(path: String, types: [String]) throws -> Int {
        let placeholders = types.map { _ in "?" }.joined(separator: ", ")
        return try StoreFile(path: path).database.read { db in
            try Int.fetchOne(db, sql: "SELECT count(*) FROM events WHERE type IN (\(placeholders))", arguments: StatementArguments(types)) ?? 0
        }
    }

    /// Runs a read-only statement (prepared once, then cached, like the query runner does) with
    /// named arguments and returns its rows as (column → integer or text) pairs.
    func rows(sql: String, arguments: [String: Argument]) throws -> [[String: String]] {
        try database.read { db in
            let statement = try db.cachedStatement(sql: sql)
            return try Row.fetchAll(statement, arguments: Self.statementArguments(arguments)).map { row in
                var values: [String: String] = [:]
                for (column, value) in row {
                    switch value.storage {
                    case .null: values[column] = "null"
                    case .int64(let i): values[column] = String(i)
                    case .double(let d): values[column] = String(d)
                    case .string(let s): values[column] = s
                    case .blob(let b): values[column] = String(decoding: b, as: UTF8.self)
                    }
                }
                return values
            }
        }
    }

    /// SQLite's plan for a statement (`EXPLAIN QUERY PLAN`), its steps joined with "; ".
    func plan(sql: String, arguments: [String: Argument]) throws -> String {
        try database.read { db in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: Self.statementArguments(arguments))
                .map { row -> String in row["detail"] ?? "?" }.joined(separator: "; ")
        }
    }
}
