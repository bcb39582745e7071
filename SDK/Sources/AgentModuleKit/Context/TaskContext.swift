import Foundation

/// What a task handler can use during a run: who the run is, progress and heartbeats,
/// cancellation, the agent's store (read-only SQL, like an adapter's) and the log.
public final class TaskContext: Sendable {
    /// The run's id: the same for every attempt, so a key to make the work idempotent.
    public let runID: String
    /// The key to make the run's effect happen once: the run's id, or what the requester gave
    /// (a workflow step: "<workflow run>/<step>/<attempt>", the same when the step runs again
    /// after a crash). Stable across attempts.
    public let idempotencyKey: String
    /// 1 for the first attempt, 2 for the first retry…
    public let attempt: Int
    private let host: HostBridge
    private let token: UInt64

    init(runID: String, idempotencyKey: String, attempt: Int, token: UInt64, host: HostBridge) {
        self.runID = runID
        self.idempotencyKey = idempotencyKey
        self.attempt = attempt
        self.token = token
        self.host = host
    }

    /// Reports how far the run got (`fraction` in 0...1, nil when unknown) and what it does
    /// now. Shown by `agent-control task show`; counts as a heartbeat.
    public func progress(fraction: Double? = nil, message: String? = nil) {
        host.taskProgress(token: token, fraction: fraction.map { $0.isFinite ? min(1, max(0, $0)) : -1 }, message: message)
    }

    /// Tells the watchdog that the run is alive (see ``TaskHandler/heartbeatTimeout``).
    public func heartbeat() { host.taskHeartbeat(token: token) }

    /// Whether the run was cancelled (or timed out): the handler's Swift task is cancelled
    /// then too, so `Task.isCancelled` and `try Task.checkCancellation()` say the same.
    public var isCancelled: Bool { Task.isCancelled || host.taskCancelled(token: token) }

    /// Throws `CancellationError` once the run was cancelled.
    public func checkCancellation() throws {
        if isCancelled { throw CancellationError() }
    }

    /// Runs a read-only SQL query over the store; `?` placeholders take `parameters` (strings,
    /// numbers, booleans). Rows are column → String, Int, Double or NSNull.
    public func query(_ sql: String, _ parameters: [any Sendable] = []) throws -> [[String: Any]] {
        let json = try host.query(sql: sql, parameters: parameters)
        guard let rows = try JSONSerialization.jsonObject(with: Data(json)) as? [[String: Any]] else {
            throw ProcessContextError("the host answered a query with something else than rows")
        }
        return rows
    }

    /// The agent's shared memory: agent-wide keys, and with `scope: .workflowRun` the keys of
    /// the workflow run this run is a step of (see ``SharedMemory``).
    public var memory: SharedMemory { SharedMemory(host: host, token: token, isValid: { true }) }

    /// Writes a line to the agent's log, tagged with the executor's name.
    public func log(_ text: String, level: MessageLevel = .info) { host.log(level: level, text: "run \(runID): \(text)") }
}
