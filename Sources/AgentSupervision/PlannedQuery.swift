import JSONSchema

/// A monitor's periodic query, checked and ready to run: its SQL, period, window and the
/// values bound to its parameters.
public struct PlannedQuery: Sendable, Equatable {
    public var process: String
    public var name: String
    public var sql: String
    /// Seconds between runs.
    public var every: Double
    /// Length of the window, in seconds.
    public var window: Double
    /// Parameter (without the colon) → value, from the process's settings.
    public var settings: [String: JSONValue]

    package init(process: String, name: String, sql: String, every: Double, window: Double, settings: [String: JSONValue]) {
        self.process = process
        self.name = name
        self.sql = sql
        self.every = every
        self.window = window
        self.settings = settings
    }
}
