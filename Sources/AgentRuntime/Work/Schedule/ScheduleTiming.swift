import Foundation

/// When a schedule fires: a cron expression (in the schedule's time zone), every N seconds,
/// or once at an instant.
public enum ScheduleTiming: Equatable, Sendable {
    case cron(CronExpression)
    /// Every so many seconds, at the multiples of it since the Unix epoch (so that the times do
    /// not move with restarts: `every: 60` fires on every minute).
    case every(Double)
    /// Once, at this instant (seconds since the epoch).
    case at(Double)

    /// True for `@reboot`: fires once each time the agent starts.
    public var isReboot: Bool {
        if case .cron(let expression) = self { return expression.isReboot }
        return false
    }

    /// The first fire time strictly after `instant` (seconds since the epoch), or nil.
    public func nextFire(after instant: Double, in zone: TimeZone) -> Double? {
        switch self {
        case .cron(let expression):
            return expression.nextFire(after: Date(timeIntervalSince1970: instant), in: zone)?.timeIntervalSince1970
        case .every(let period):
            guard period > 0, instant.isFinite else { return nil }
            var time = ((instant / period).rounded(.down) + 1) * period
            // Rounding may land on (or before) the instant itself.
            while time <= instant { time += period }
            return time
        case .at(let time):
            return time > instant ? time : nil
        }
    }

    /// The fire times in (`after`, `through`]: how many there are, the first, and the newest
    /// `keep` of them (oldest first). A cron expression is walked at most ``walkLimit`` steps
    /// (`capped` then: the count is a lower bound).
    public func fireTimes(after: Double, through: Double, in zone: TimeZone, keep: Int)
        -> (count: Int, first: Double?, newest: [Double], capped: Bool)
    {
        guard through > after else { return (0, nil, [], false) }
        switch self {
        case .every(let period):
            guard let first = nextFire(after: after, in: zone), first <= through else { return (0, nil, [], false) }
            let spans = ((through - first) / period).rounded(.down)
            let count = spans >= Double(Int.max / 2) ? Int.max / 2 : Int(spans) + 1
            let kept = min(max(keep, 0), count)
            let last = first + Double(count - 1) * period
            let newest = (0..<kept).reversed().map { last - Double($0) * period }
            return (count, first, newest, false)
        case .at(let time):
            return time > after && time <= through ? (1, time, keep > 0 ? [time] : [], false) : (0, nil, [], false)
        case .cron:
            var count = 0
            var first: Double?
            var newest: [Double] = []
            var cursor = after
            while let time = nextFire(after: cursor, in: zone), time <= through {
                if first == nil { first = time }
                count += 1
                if keep > 0 {
                    newest.append(time)
                    if newest.count > keep * 2 { newest.removeFirst(newest.count - keep) }
                }
                cursor = time
                if count >= Self.walkLimit { return (count, first, Array(newest.suffix(keep)), true) }
            }
            return (count, first, Array(newest.suffix(keep)), false)
        }
    }

    /// Steps a cron expression is walked over missed times at most.
    public static let walkLimit = 100_000

    /// The settings key and value as `schedule list` shows them: ("cron", "0 3 * * *").
    public var shown: (key: String, text: String) {
        switch self {
        case .cron(let expression): ("cron", expression.description)
        case .every(let period): ("every", period.rounded() == period && period < 1e15 ? String(Int(period)) : String(period))
        case .at(let time): ("at", TaskRun.iso(time))
        }
    }
}
