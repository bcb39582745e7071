/// A token bucket: what may still be spent now (a burst), refilled at a steady rate, and what
/// was left out since the last thing let through: for what a process may put in a store or a
/// log that nothing else bounds (alerts in the chat, output lines in the agent's log).
public struct RateAllowance: Sendable {
    /// The most that may be spent at once, and what is added each second.
    public let burst: Double
    public let perSecond: Double
    private var tokens: Double
    private var refilled: Double
    /// How many were left out since the last ``takeLeftOut()``.
    public private(set) var leftOut = 0

    /// A full allowance at `now` (seconds on any monotonic clock).
    public init(burst: Double, perSecond: Double, now: Double) {
        self.burst = burst
        self.perSecond = perSecond
        tokens = burst
        refilled = now
    }

    /// Whether something costing `cost` may go through now (else it is counted as left out).
    public mutating func take(_ cost: Double = 1, now: Double) -> Bool {
        tokens = min(burst, tokens + max(0, now - refilled) * perSecond)
        refilled = now
        guard tokens >= cost else {
            leftOut += 1
            return false
        }
        tokens -= cost
        return true
    }

    /// How many were left out since the last call (0: none); forgets them.
    public mutating func takeLeftOut() -> Int {
        defer { leftOut = 0 }
        return leftOut
    }
}
