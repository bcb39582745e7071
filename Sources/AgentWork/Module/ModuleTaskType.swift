import AgentSupervision
/// A module task type (`"<module>.<type>"`) as the settings resolved it: the library its
/// executors load and what its manifest declares for the runner.
public struct ModuleTaskType: Sendable, Equatable {
    public var module: ModuleLocation
    /// The type's name within its module.
    public var type: String
    /// The manifest's `heartbeat_timeout`: seconds a run may go without a heartbeat (nil: no
    /// watchdog).
    public var heartbeatTimeout: Double?

    public init(module: ModuleLocation, type: String, heartbeatTimeout: Double? = nil) {
        self.module = module
        self.type = type
        self.heartbeatTimeout = heartbeatTimeout
    }
}
