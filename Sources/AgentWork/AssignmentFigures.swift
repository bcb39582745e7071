import JSONSchema

/// Executors and the queue, for status and the metrics (see ``TaskCoordinator``).
public struct AssignmentFigures: Sendable {
    public struct Executor: Sendable {
        public var name: String
        public var state: String
        public var running: Int
        public var maxConcurrent: Int
        /// Runs given to it over the agent's life.
        public var assigned: Int
    }

    public var executors: [Executor]
    /// Runs waiting (queued or retrying), by priority.
    public var queuedByPriority: [String: Int]
    /// Runs started, and the seconds they waited from due to start.
    public var started: Int
    public var waitSum: Double
    public var waitLongest: Double
    /// `task status`'s view: the same as `executor list`'s statistics.
    public var json: JSONValue
}
