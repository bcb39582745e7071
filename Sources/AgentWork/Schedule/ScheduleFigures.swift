/// One schedule's fire times for the metrics, over the agent's life.
public struct ScheduleFigures: Sendable {
    public var schedule: String
    public var fired: Int
    public var missed: Int
    public var skipped: Int
    /// The next planned fire (seconds since the epoch; nil: none, paused or disabled).
    public var next: Double?
}
