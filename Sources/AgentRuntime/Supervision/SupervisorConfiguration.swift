/// How the supervisor runs workers. Per-process policy comes from settings; these are the
/// agent-wide defaults.
public struct SupervisorConfiguration: Sendable {
    /// The `agent-worker` executable.
    public var workerPath: String
    /// Environment for workers (the supervisor adds its pid and backtrace settings).
    public var environment: [String: String]
    /// Seconds a stopping worker gets between the stop request (and SIGTERM) and SIGKILL.
    public var stopTimeout: Double = 5
    /// First restart delay; doubles after each failure in a row, up to `maximumRestartDelay`.
    public var initialRestartDelay: Double = 0.1
    public var maximumRestartDelay: Double = 30
    /// A worker that ran this long counts as healthy: its next failure starts the delay over.
    public var healthyAfter: Double = 10
    /// Bytes of undelivered events kept per subscriber before new ones are dropped (counted).
    public var maximumQueuedBytes = 16 << 20

    public init(workerPath: String, environment: [String: String]) {
        self.workerPath = workerPath
        self.environment = environment
    }
}
