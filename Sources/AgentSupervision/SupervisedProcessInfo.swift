import AgentLoop
import JSONSchema

/// What users see of a supervised process.
public struct SupervisedProcessInfo: Sendable, Equatable {
    public var name: String
    public var type: String
    public var module: String
    public var state: ProcessState
    public var pid: Int32
    public var restarts: Int
    public var lastExit: String?
    public var lastExitCode: Int32?
    public var lastSignal: Int32?
    /// Seconds in the current state (the uptime, when running).
    public var stateSeconds: Double?
    public var eventsEmitted: Int
    public var eventsDelivered: Int
    public var eventsDropped: Int
    /// Lines a `jsonl/1` program wrote that were refused (not JSON, not a frame, too long).
    public var linesRefused = 0
    /// Bytes of events waiting to be delivered to the process.
    public var queuedBytes: Int
    /// Whether the process is paused because a subscriber of its is full (`when_full: block`).
    public var paused: Bool
    /// How many times a full subscriber paused it.
    public var timesPaused: Int
    /// The signal that stopped its worker (SIGSTOP…), until SIGCONT.
    public var suspendedBy: Int32?
    /// A replica's: the process's name in the settings (nil without `replicas`).
    public var replicaOf: String?
    /// A replica's number, 1…N (0 without `replicas`).
    public var replica: Int
    /// Monotonic seconds (0: never): the last worker's end noticed, the current one started (or
    /// a spare adopted), its ready frame handled — a restart's steps, for the benchmark.
    package var reapedAt = 0.0
    package var spawnedAt = 0.0
    package var readyAt = 0.0

    @LoopActor package init(_ process: SupervisedProcess) {
        name = process.name
        replicaOf = process.planned.replicaOf
        replica = process.planned.replica
        type = process.type
        module = process.module.name
        state = process.state
        pid = process.pid
        restarts = process.restarts
        lastExit = process.lastExit
        lastExitCode = process.lastExitCode
        lastSignal = process.lastSignal
        stateSeconds = process.stateSince > 0 ? EventLoop.now() - process.stateSince : nil
        eventsEmitted = process.eventsEmitted
        eventsDelivered = process.eventsDelivered
        eventsDropped = process.eventsDropped
        linesRefused = process.linesRefused
        queuedBytes = process.pendingBytes
        paused = process.pauseCount > 0
        timesPaused = process.timesPaused
        suspendedBy = process.hasWorker ? process.suspendedBy : nil
        reapedAt = process.reapedAt
        spawnedAt = process.spawnedAt
        readyAt = process.readyAt
    }
}

extension SupervisedProcessInfo {
    /// The process as `agent-control status --json` shows it.
    public var json: JSONValue {
        var object: JSONObject = [
            "name": .string(name), "type": .string(type), "module": .string(module),
            "state": .string(stateName), "restarts": .number(JSONNumber(restarts)),
            "events_emitted": .number(JSONNumber(eventsEmitted)), "events_delivered": .number(JSONNumber(eventsDelivered)),
            "events_dropped": .number(JSONNumber(eventsDropped)), "queued_bytes": .number(JSONNumber(queuedBytes)),
        ]
        if let replicaOf {
            object["replica_of"] = .string(replicaOf)
            object["replica"] = .number(JSONNumber(replica))
        }
        if paused { object["paused"] = true }
        if timesPaused > 0 { object["times_paused"] = .number(JSONNumber(timesPaused)) }
        if linesRefused > 0 { object["lines_refused"] = .number(JSONNumber(linesRefused)) }
        if pid > 0 { object["pid"] = .number(JSONNumber(Int(pid))) }
        if let since = stateSeconds { object["state_seconds"] = .number(JSONNumber((since * 1000).rounded() / 1000)) }
        switch state {
        case .backoff(let at): object["retry_in"] = .number(JSONNumber(((at - EventLoop.now()) * 1000).rounded() / 1000))
        case .failed(let reason): object["reason"] = .string(reason)
        case .exited(let code): object["exit_code"] = .number(JSONNumber(Int(code)))
        default: break
        }
        if let lastExit { object["last_exit"] = .string(lastExit) }
        if let code = lastExitCode { object["last_exit_code"] = .number(JSONNumber(Int(code))) }
        if let signal = lastSignal { object["last_signal"] = .string(SignalName.of(signal)) }
        if let signal = suspendedBy { object["stop_signal"] = .string(SignalName.of(signal)) }
        return .object(object)
    }

    /// `running`, `backoff`, `failed`… and `suspended` for a worker stopped by a signal.
    public var stateName: String {
        if suspendedBy != nil { return "suspended" }
        return state.shortName
    }
}
