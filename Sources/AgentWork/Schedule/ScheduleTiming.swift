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

    /// The fire times in (`after`, `through`]: how many there are (`capped`: at least so
    /// many), the first, and the newest `keep` of them (oldest first).
    public struct Due: Equatable, Sendable {
        public var count = 0
        public var first: Double?
        public var newest: [Double] = []
        public var capped = false
        /// Fire times computed one by one to find these: what the answer cost.
        public var computed = 0

        public static let empty = Due()
    }

    /// The fire times in (`after`, `through`], found at a cost that does not grow with their
    /// count: `every` and `at` by arithmetic; a cron expression counted day by day between
    /// changes of the zone's offset (``CronExpression/countFires(after:through:in:budget:)``:
    /// at most ``walkLimit`` times computed one by one around the changes; beyond: `capped`),
    /// its newest `keep` searched back from `through`.
    public func fireTimes(after: Double, through: Double, in zone: TimeZone, keep: Int) -> Due {
        guard through > after else { return .empty }
        switch self {
        case .every(let period):
            guard let first = nextFire(after: after, in: zone), first <= through else { return .empty }
            let spans = ((through - first) / period).rounded(.down)
            let count = spans >= Double(Int.max / 2) ? Int.max / 2 : Int(spans) + 1
            let kept = min(max(keep, 0), count)
            let last = first + Double(count - 1) * period
            let newest = (0..<kept).reversed().map { last - Double($0) * period }
            return Due(count: count, first: first, newest: newest)
        case .at(let time):
            return time > after && time <= through ? Due(count: 1, first: time, newest: keep > 0 ? [time] : []) : .empty
        case .cron(let expression):
            var computed = 0
            if let few = expression.fires(after: after, through: through, in: zone, ifAtMost: Self.computedAtOnce, steps: &computed) {
                return Due(count: few.count, first: few.first, newest: Array(few.suffix(max(keep, 0))), computed: computed)
            }
            var budget = Self.walkLimit
            let counted = expression.countFires(after: after, through: through, in: zone, budget: &budget)
            computed += Self.walkLimit - budget + 1
            guard counted.count > 0, let first = nextFire(after: after, in: zone), first <= through else {
                return Due(capped: counted.capped, computed: computed)
            }
            let newest = expression.newestFires(after: after, through: through, in: zone, want: min(max(keep, 0), counted.count), steps: &computed)
            return Due(count: counted.count, first: first, newest: newest, capped: counted.capped, computed: computed)
        }
    }

    /// Fire times of a cron expression computed one by one at most when counting those
    /// missed (around changes of the zone's offset; the count is a lower bound beyond).
    public static let walkLimit = 10_000

    /// Up to this many fire times (a fire on time, a short delay) are computed one by one.
    package static let computedAtOnce = 64

    /// The settings key and value as `schedule list` shows them: ("cron", "0 3 * * *").
    public var shown: (key: String, text: String) {
        switch self {
        case .cron(let expression): ("cron", expression.description)
        case .every(let period): ("every", period.rounded() == period && period < 1e15 ? String(Int(period)) : String(period))
        case .at(let time): ("at", TaskRun.iso(time))
        }
    }
}
