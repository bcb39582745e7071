import AgentTestSupport
@testable import AgentWork
import Foundation

/// Fire times of an expression as local ISO 8601 strings, from an injected instant.
enum CronFixtures {
    /// An instant from an ISO 8601 string with an offset or Z (e.g. 2026-03-29T00:00:00+01:00).
    static func instant(_ text: String) -> Date {
        let formatter = ISO8601DateFormatter()
        for options: ISO8601DateFormatter.Options in [[.withInternetDateTime], [.withInternetDateTime, .withFractionalSeconds]] {
            formatter.formatOptions = options
            if let date = formatter.date(from: text) { return date }
        }
        fatalError("not an ISO 8601 time: \(text)")
    }

    static func zone(_ name: String) -> TimeZone {
        guard let zone = TimeZone(identifier: name) else { fatalError("no time zone \(name) on this system") }
        return zone
    }

    /// The next `count` fire times after `start`, each as the local time with its offset.
    static func fires(_ expression: String, after start: String, in zoneName: String = "UTC", count: Int) throws -> [String] {
        let cron = try CronExpression(parsing: expression)
        let zone = zone(zoneName)
        var times: [String] = []
        var cursor = instant(start)
        for _ in 0..<count {
            guard let next = cron.nextFire(after: cursor, in: zone) else { break }
            times.append(ZonedTimestamp.string(next, in: zone))
            cursor = next
        }
        return times
    }
}
