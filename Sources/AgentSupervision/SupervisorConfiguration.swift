import AgentCore
import Foundation

/// How the supervisor starts workers.
public struct SupervisorConfiguration: Sendable {
    /// The `agent-worker` executable.
    public var workerPath: String
    /// Environment for workers (the supervisor adds its pid and backtrace settings).
    public var environment: [String: String]

    /// The most time one drain of a worker's frames (its emit ring, or its socket) takes in a
    /// loop turn before it yields to the next turn (see `DrainSlice`).
    package var drainSlice = 0.001

    public init(workerPath: String, environment: [String: String]) {
        self.workerPath = workerPath
        self.environment = environment
    }

    /// Whether workers get shared-memory rings for their events (see `SharedRing`); with
    /// `AGENT_SHARED_RINGS=0` (or `no`, `false`, `off`) events go on their sockets.
    package var sharedRings: Bool { !Self.switchedOff("AGENT_SHARED_RINGS", in: environment) }

    /// Whether the environment variable `name` turns something off: `0`, `no`, `false` or
    /// `off`, in any case.
    package static func switchedOff(_ name: String, in environment: [String: String]) -> Bool {
        EnvironmentSwitch.isOff(environment[name])
    }

    /// What a worker's environment holds besides `base`: the supervisor's pid (a worker
    /// checks its parent against it) and, unless set, no Swift backtracer (it adds ~10 ms to a
    /// crashing worker's death). Never systemd's notify socket or watchdog: only the supervisor
    /// speaks for the service.
    package static func workerEnvironment(_ base: [String: String]) -> [String: String] {
        var environment = base
        for key in SystemdNotifier.environmentKeys { environment[key] = nil }
        environment["AGENT_SUPERVISOR_PID"] = String(getpid())
        if environment["SWIFT_BACKTRACE"] == nil { environment["SWIFT_BACKTRACE"] = "enable=no" }
        return environment
    }
}
