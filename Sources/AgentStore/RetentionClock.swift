import Foundation

/// When the writer next enforces the retention: at the start; 10 s after the last pass once a
/// hundredth of the smallest count limit (`max_events`, `max_runs`) has been written since;
/// otherwise as often as `max_age` needs (a tenth of it, from 10 s to 10 min), or 10 min once
/// anything was written; and 1 s after the last pass once a hundredth of `max_bytes` has been
/// written since. So a store holds at most 1 % more than a count limit for at most 10 min,
/// at most 1 % and a second's writes more than `max_bytes` (a flood of large events is deleted
/// as fast as it comes), and an idle agent does no pass every 10 s: each cost CPU and mapped
/// again the code pages the start had given back (SQLite's parser, GRDB's write path: 4.6 MB).
struct RetentionClock {
    /// The shortest time between two passes.
    static let busyInterval: Double = 10
    /// The longest time between two passes once anything was written.
    static let longestIdleInterval: Double = 600
    /// The shortest time between two passes once a hundredth of `max_bytes` was written.
    static let floodInterval: Double = 1

    private let idleInterval: Double
    private let hasAgeLimit: Bool
    /// Rows written since the last pass that make the next one due after `busyInterval` (nil:
    /// no count limit).
    private let threshold: Int?
    /// Event bytes written since the last pass that make the next one due after
    /// `floodInterval` (nil: no size limit).
    private let bytesThreshold: Int?
    private var last = Date.distantPast
    private var writtenSince: Int
    private var bytesSince = 0

    init(maximumAge: Double?, maximumEvents: Int?, maximumRuns: Int?, maximumBytes: Int? = nil) {
        hasAgeLimit = maximumAge != nil
        idleInterval = maximumAge.map { max(Self.busyInterval, min(Self.longestIdleInterval, $0 / 10)) } ?? Self.longestIdleInterval
        let smallest = min(maximumEvents ?? .max, maximumRuns ?? .max)
        threshold = smallest == .max ? nil : max(1, smallest / 100)
        bytesThreshold = maximumBytes.map { max(1, $0 / 100) }
        writtenSince = 0
    }

    /// When the next pass is due (`distantFuture`: only once something is written).
    var due: Date {
        if let bytesThreshold, bytesSince >= bytesThreshold, last != .distantPast { return last.addingTimeInterval(Self.floodInterval) }
        if last == .distantPast || threshold.map({ writtenSince >= $0 }) == true { return last.addingTimeInterval(Self.busyInterval) }
        if writtenSince > 0 || hasAgeLimit { return last.addingTimeInterval(idleInterval) }
        return .distantFuture
    }

    /// `rows` (events, task and workflow runs, schedule fires) were committed, with about
    /// `bytes` of events.
    mutating func written(_ rows: Int, bytes: Int = 0) {
        writtenSince = writtenSince.addingReportingOverflow(rows).overflow ? .max : writtenSince + rows
        bytesSince = bytesSince.addingReportingOverflow(bytes).overflow ? .max : bytesSince + bytes
    }

    /// A pass ran at `time`.
    mutating func passed(at time: Date) {
        last = time
        writtenSince = 0
        bytesSince = 0
    }
}
