import Foundation

/// Times as the command line and the commands take them.
public enum TimeSpec {
    /// What ``since(_:now:)`` takes, for refusals.
    public static let sinceForm = "a duration back from now of at most 100 years (30s, 10m, 2h, 1d) or an ISO 8601 time"

    /// Parses `--since`: a duration back from now (`30s`, `10m`, `2h`, `1d`) or an ISO 8601 time.
    /// Nil for a duration beyond 100 years too (``SettingsBounds/longestRetention``), rather than
    /// a time clamped without a word (`1e308s` read as "everything").
    public static func since(_ text: String, now: Double = Date().timeIntervalSince1970) -> Double? {
        let units: [Character: Double] = ["s": 1, "m": 60, "h": 3600, "d": 86400]
        if let unit = text.last, let factor = units[unit], let amount = Double(text.dropLast()), amount >= 0 {
            return amount * factor <= SettingsBounds.longestRetention ? now - amount * factor : nil
        }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        if let date = formatter.date(from: text) { return date.timeIntervalSince1970 }
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.date(from: text)?.timeIntervalSince1970
    }
}
