/// One line of a process's run history: a start, readiness, an exit, a restart, a state change
/// or a command.
public struct HistoryEntry: Sendable, Equatable {
    public var time: Double
    public var process: String
    /// `started`, `ready`, `exited`, `restarting`, `failed`, `stopped`, `command`…
    public var event: String
    public var detail: String
    public var pid: Int32?
    public var exitCode: Int32?
    public var signal: String?

    public init(time: Double, process: String, event: String, detail: String = "", pid: Int32? = nil, exitCode: Int32? = nil, signal: String? = nil) {
        self.time = time
        self.process = process
        self.event = event
        self.detail = detail
        self.pid = pid
        self.exitCode = exitCode
        self.signal = signal
    }
}
