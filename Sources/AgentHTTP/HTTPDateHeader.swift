import Foundation
import Synchronization

/// The `Date` header every answer carries (RFC 9110 IMF-fixdate: `Tue, 24 Nov 2026 05:04:37
/// GMT`), made when an answer needs it and reused for the rest of that second. Hummingbird's
/// `Application` refreshes its date every second on a timer instead, which woke the idle agent
/// twice a second with no client.
final class HTTPDateHeader: Sendable {
    private let cache = Mutex<(second: Int, text: String)>((-1, ""))

    /// The current date as the header wants it.
    var current: String {
        let second = time(nil)
        return cache.withLock { cache in
            if cache.second != second { cache = (second, Self.format(second)) }
            return cache.text
        }
    }

    private static let days = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `seconds` since the epoch as an IMF-fixdate, in English whatever the locale.
    static func format(_ seconds: Int) -> String {
        var clock = time_t(seconds)
        var parts = tm()
        gmtime_r(&clock, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(days[Int(parts.tm_wday)]), \(two(parts.tm_mday)) \(months[Int(parts.tm_mon)]) \(1900 + parts.tm_year) "
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec)) GMT"
    }
}
