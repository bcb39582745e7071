import Foundation

/// When the writer next enforces the retention: at the start, then at most every 10 s while
/// something is written, and on a store nothing is written to only as often as `max_age` needs
/// (a tenth of it, from 10 s to 10 min). Without writes only age can put anything past the
/// limits; a pass every 10 s on an idle agent cost CPU and mapped again the code pages the
/// start had given back (SQLite's parser among them).
struct RetentionClock {
    /// The shortest time between two passes.
    static let busyInterval: Double = 10
    /// The longest time between two passes on a store with a `max_age`.
    static let longestIdleInterval: Double = 600

    private let idleInterval: Double?
    private var last = Date.distantPast
    private var wrote = true

    init(maximumAge: Double?) {
        idleInterval = maximumAge.map { max(Self.busyInterval, min(Self.longestIdleInterval, $0 / 10)) }
    }

    /// When the next pass is due (`distantFuture`: only once something is written).
    var due: Date {
        if wrote { return last.addingTimeInterval(Self.busyInterval) }
        return idleInterval.map { last.addingTimeInterval($0) } ?? .distantFuture
    }

    /// Something was committed.
    mutating func written() { wrote = true }

    /// A pass ran at `time`.
    mutating func passed(at time: Date) {
        last = time
        wrote = false
    }
}
