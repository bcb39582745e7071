import AgentBase
import JSONSchema

/// A process in a command's answer (`process`), as `status` shows it: encoded from ``json``,
/// the one description of the shape, which the status snapshot writes on its hot path.
extension SupervisedProcessInfo: Encodable {
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(json)
    }

    /// A process that was never spawned (examples, tests).
    package init(name: String, type: String, module: String, state: ProcessState, pid: Int32 = 0) {
        self.name = name
        self.type = type
        self.module = module
        self.state = state
        self.pid = pid
        restarts = 0
        eventsEmitted = 0
        eventsDelivered = 0
        eventsDropped = 0
        queuedBytes = 0
        paused = false
        timesPaused = 0
        replica = 0
    }
}
