/// One task's runs for the metrics.
public struct TaskFigures: Sendable {
    public var task: String
    public var queued: Int
    public var running: Int
    /// Attempts ended, by outcome.
    public var ended: [String: Int]
    /// Runs ended `abandoned` (interrupted more often than the task allows).
    public var abandoned: Int = 0
}
