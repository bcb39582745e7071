/// How the supervisor runs workers. Per-process policy (restart, stop timeout, watchdog,
/// queue) comes from the settings (``ProcessPolicy``).
public struct SupervisorConfiguration: Sendable {
    /// The `agent-worker` executable.
    public var workerPath: String
    /// Environment for workers (the supervisor adds its pid and backtrace settings).
    public var environment: [String: String]

    public init(workerPath: String, environment: [String: String]) {
        self.workerPath = workerPath
        self.environment = environment
    }
}
