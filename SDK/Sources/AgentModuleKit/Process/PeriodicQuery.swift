/// A read-only SQL query over the agent's event log that the runtime runs for a monitor every
/// `every` seconds; the rows arrive as an event of type `query:<name>` (see
/// ``Event/queryResult()``).
///
/// The SQL may use `:since` and `:until` (seconds since the epoch: the window's bounds),
/// `:window` (its length in seconds), and `:<setting>` for any top-level setting of the
/// process. The `events` table has `id`, `time` (seconds since the epoch), `type`, `source` and
/// `payload` (JSON text; SQLite's JSON functions reach into it):
///
/// ```swift
/// PeriodicQuery(name: "counts",
///     sql: "SELECT json_extract(payload, '$.pair') AS pair, count(*) AS n FROM events WHERE type = 'trade' AND time >= :since GROUP BY pair",
///     every: .seconds(10), window: .setting("window"))
/// ```
/// A query that is not valid or not read-only is a settings error at start, not a crash later.
public struct PeriodicQuery: Sendable {
    /// A number of seconds, given here or read from one of the process's settings.
    public struct Interval: Sendable {
        let json: JSONText
        /// `value` seconds.
        public static func seconds(_ value: Double) -> Interval { Interval(json: .double(value)) }
        /// The value of the process's top-level setting `name` (a number of seconds).
        public static func setting(_ name: String) -> Interval { Interval(json: .string("$" + name)) }
    }

    /// The query's name: its rows arrive as events of type `query:<name>`.
    public var name: String
    /// The read-only SQL (see above for its parameters).
    public var sql: String
    /// How often the runtime runs it.
    public var every: Interval
    /// How far back from each run `:since` goes.
    public var window: Interval

    /// A query named `name` run every `every` over the last `window` of events.
    public init(name: String, sql: String, every: Interval, window: Interval) {
        self.name = name
        self.sql = sql
        self.every = every
        self.window = window
    }

    var manifestJSON: JSONText {
        .object([("name", .string(name)), ("sql", .string(sql)), ("every", every.json), ("window", window.json)])
    }
}
