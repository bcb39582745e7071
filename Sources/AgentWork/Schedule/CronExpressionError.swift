/// Why a cron expression could not be parsed: the field, the offending text and what was
/// expected instead.
public struct CronExpressionError: Error, CustomStringConvertible, Sendable, Equatable {
    /// "second", "minute", "hour", "day of month", "month", "day of week", or "expression" for
    /// the expression as a whole (field count, unknown shortcut).
    public var field: String
    /// The offending text, e.g. `61` or `5-2`.
    public var part: String
    /// What was expected and how to fix it.
    public var message: String

    /// Creates an error.
    public init(field: String, part: String, message: String) {
        self.field = field
        self.part = part
        self.message = message
    }

    /// `minute "61": 61 is out of range: a minute is 0 to 59`
    public var description: String {
        "\(field) \"\(part)\": \(message)"
    }
}
