import AgentBase
import AgentCore
import AgentSupervision
import GRDB
import GRDBSQLite
import JSONSchema

/// Planning a monitor's query: bounds on its period and window, and its SQL checked against
/// the store's schema.
extension PlannedQuery {
    /// The longest period: a day (0: the query never runs on its own).
    package static let maximumPeriod: Double = 86_400
    /// The shortest period but 0 (``SettingsBounds/shortestPeriod``): a query of `every:
    /// 1e-300` ran back to back and kept a core a quarter busy.
    package static let minimumPeriod: Double = SettingsBounds.shortestPeriod
    /// The longest window: ten years.
    package static let maximumWindow: Double = 315_360_000

    /// Resolves `every` / `window` and checks the SQL against the store's schema: it must
    /// compile, be read-only, and use only known parameters. Returns a message on failure.
    /// `checks` remembers what each distinct SQL text gave, so that 1,000 processes declaring
    /// the same query compile and run it once.
    package static func plan(_ declaration: ModuleManifest.QueryDeclaration, process: String, settings: JSONObject,
                     checks: SQLChecks? = nil) -> Result<PlannedQuery, QueryProblem> {
        // Both come from a module's manifest (or a setting it names): untrusted, so bounded
        // here with a reason (timers saturate anyway): a period of at most a day, a window of
        // at most ten years, neither negative.
        // `shortest`: the least non-zero value (0 stays "never" for the period).
        func seconds(_ value: JSONValue, _ what: String, upTo maximum: Double, shortest: Double = 0) -> Result<Double, QueryProblem> {
            func bounded(_ number: Double, _ origin: String, setting: String?) -> Result<Double, QueryProblem> {
                let range = shortest > 0 ? "0 (never) or \(shortest.compactText) to \(Int(maximum))" : "0 to \(Int(maximum))"
                guard number.isFinite, number >= 0, number <= maximum, number == 0 || number >= shortest else {
                    return .failure(QueryProblem("its \(what)\(origin) must be \(range) seconds, found \(number.compactText)", setting: setting))
                }
                return .success(number)
            }
            if let number = value.numberValue?.doubleValue { return bounded(number, "", setting: nil) }
            if let reference = value.stringValue, reference.hasPrefix("$") {
                let key = String(reference.dropFirst())
                guard let number = settings[key]?.numberValue?.doubleValue else {
                    return .failure(QueryProblem("its \(what) comes from the setting \"\(key)\", which is not a number here", setting: key))
                }
                return bounded(number, " (the setting \"\(key)\")", setting: key)
            }
            return .failure(QueryProblem("its \(what) must be a number of seconds or \"$setting\", found \(value.serialized())"))
        }
        let every: Double, window: Double
        switch seconds(declaration.every, "period", upTo: PlannedQuery.maximumPeriod, shortest: PlannedQuery.minimumPeriod) {
        case .success(let value): every = value
        case .failure(let problem): return .failure(problem)
        }
        switch seconds(declaration.window, "window", upTo: PlannedQuery.maximumWindow) {
        case .success(let value): window = value
        case .failure(let problem): return .failure(problem)
        }
        var bound: [String: JSONValue] = [:]
        for (key, value) in settings {
            switch value {
            case .string, .number, .bool, .null: bound[key] = value
            default: break
            }
        }
        let planned = PlannedQuery(process: process, name: declaration.name, sql: declaration.sql, every: every, window: window, settings: bound)
        let check: SQLCheck
        if let cached = checks?.bySQL[declaration.sql] {
            check = cached
        } else {
            check = SQLCheck(declaration.sql)
            checks?.bySQL[declaration.sql] = check
        }
        if let problem = check.compileProblem ?? check.writeProblem { return .failure(problem) }
        let known = Set(["since", "until", "window"]).union(bound.keys)
        for name in check.parameters where !known.contains(name) {
            return .failure(QueryProblem("it uses the parameter :\(name), which is neither :since, :until, :window nor a setting of the process"))
        }
        if let problem = check.runProblem { return .failure(problem) }
        return .success(planned)
    }

    /// What one SQL text gives against the store's schema, whatever process declares it: whether
    /// it compiles, whether it only reads, its parameters, and whether it runs (on the empty
    /// scratch database, settings' parameters bound to NULL).
    package struct SQLCheck {
        package var compileProblem: QueryProblem?
        package var writeProblem: QueryProblem?
        package var parameters: [String] = []
        package var runProblem: QueryProblem?

        package init(_ sql: String) {
            do {
                let scratch = try StoreSchema.scratchDatabase()
                try scratch.read { db in
                    let statement: Statement
                    do {
                        statement = try db.makeStatement(sql: sql)
                    } catch let error as DatabaseError {
                        compileProblem = QueryProblem("the SQL is not valid: \(error.message ?? "\(error)")")
                        return
                    }
                    if !statement.isReadonly {
                        writeProblem = QueryProblem("it must only read (SELECT); it would change the database")
                    }
                    parameters = PlannedQuery.parameterNames(statement)
                    guard writeProblem == nil else { return }
                    let probe = PlannedQuery(process: "", name: "", sql: sql, every: 1, window: 60, settings: [:])
                    do {
                        _ = try Row.fetchAll(statement, arguments: probe.arguments(for: statement, now: 0))
                    } catch let error as DatabaseError {
                        runProblem = QueryProblem("the SQL is not valid: \(error.message ?? "\(error)")")
                    }
                }
            } catch {
                compileProblem = QueryProblem("\(error)")
            }
        }
    }

    /// The checks of one validation, by SQL text.
    package final class SQLChecks {
        package var bySQL: [String: SQLCheck] = [:]
        package init() {}
    }

    /// The values for the statement's parameters at time `now`.
    package func arguments(for statement: Statement, now: Double) -> StatementArguments {
        var values: [String: DatabaseValue] = [:]
        for name in Self.parameterNames(statement) {
            values[name] = value(of: name, now: now)
        }
        return StatementArguments(values)
    }

    private func value(of name: String, now: Double) -> DatabaseValue {
        switch name {
        case "since": return (now - window).databaseValue
        case "until": return now.databaseValue
        case "window": return window.databaseValue
        default:
            switch settings[name] {
            case .string(let text)?: return text.databaseValue
            case .number(let number)?:
                if let integer = number.intValue { return integer.databaseValue }
                return number.doubleValue.databaseValue
            case .bool(let flag)?: return flag.databaseValue
            default: return .null
            }
        }
    }

    /// The statement's named parameters, without their prefix (`:since` → `since`).
    package static func parameterNames(_ statement: Statement) -> [String] {
        let count = sqlite3_bind_parameter_count(statement.sqliteStatement)
        guard count > 0 else { return [] }
        return (1...count).compactMap { index in
            sqlite3_bind_parameter_name(statement.sqliteStatement, index).map { String(String(cString: $0).drop { $0 == ":" || $0 == "$" || $0 == "@" }) }
        }
    }
}

/// Why a periodic query cannot run.
package struct QueryProblem: Error, CustomStringConvertible {
    package var description: String
    /// The process's setting at fault (`report_every`), when a setting gave the value.
    package var setting: String?
    package init(_ description: String, setting: String? = nil) {
        self.description = description
        self.setting = setting
    }
}
