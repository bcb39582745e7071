import AgentLoop
/// Where a supervised process is in its life, as users see it.
public enum ProcessState: Equatable, Sendable, CustomStringConvertible {
    /// Spawned; waiting for the worker to report ready.
    case starting
    case running
    /// Waiting to be restarted at `retryAt` (monotonic seconds).
    case backoff(retryAt: Double)
    case stopping
    case stopped
    /// Ended on its own and will not be restarted.
    case exited(code: Int32)
    /// Will not be restarted until the settings or the module are fixed.
    case failed(reason: String)

    public var description: String {
        switch self {
        case .starting: "starting"
        case .running: "running"
        case .backoff(let at): "backoff (retry in \(String(format: "%.1f", max(0, at - EventLoop.now()))) s)"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .exited(let code): "exited (\(code))"
        case .failed(let reason): "failed: \(reason)"
        }
    }
}

extension ProcessState {
    /// The state without its detail: `backoff`, `failed`, `exited`.
    package var shortName: String {
        switch self {
        case .starting: "starting"
        case .running: "running"
        case .backoff: "backoff"
        case .stopping: "stopping"
        case .stopped: "stopped"
        case .exited: "exited"
        case .failed: "failed"
        }
    }
}
