import AgentOutputs
import AgentStore
import AgentSupervision
import AgentWork
import Foundation
import JSONSchema

/// What `status`, `metrics` and `readiness` report, copied from supervision state in one go on
/// the supervisor's loop (plain values, a few microseconds for tens of processes) and turned
/// into JSON elsewhere: the loop never builds or serializes an answer for the HTTP front, and
/// one snapshot answers every request that waited for the same loop turn (see
/// ``SnapshotBatcher``).
public struct AgentSnapshot: Sendable {
    /// One configured process.
    public struct Process: Sendable {
        public var info: SupervisedProcessInfo
        /// The old worker of a process a reload replaced, while it stops (status shows the
        /// process `stopping` with that worker rather than `stopped` without one).
        public var replacing: SupervisedProcessInfo?
        /// Whether a restart follows the stop under way (a `process restart`, a reload).
        public var restartFollows: Bool
        /// Whether a worker of it ever reported ready (a first start is not a restart).
        public var wasEverReady: Bool
        /// Monotonic times of its recent worker ends that nobody asked for.
        public var failureTimes: [Double]
        public var restartPolicy: String

        /// The pid of the worker that runs for it now, if any.
        public var workerPid: Int32? {
            if let replacing, replacing.pid > 0 { return replacing.pid }
            return info.pid > 0 ? info.pid : nil
        }

        /// As `status` names its state.
        public var stateName: String { replacing != nil ? "stopping" : info.stateName }

        package init(info: SupervisedProcessInfo, replacing: SupervisedProcessInfo? = nil, restartFollows: Bool, wasEverReady: Bool, failureTimes: [Double], restartPolicy: String) {
            self.info = info
            self.replacing = replacing
            self.restartFollows = restartFollows
            self.wasEverReady = wasEverReady
            self.failureTimes = failureTimes
            self.restartPolicy = restartPolicy
        }
    }

    /// Totals over the agent's life, across reloads that removed or replaced processes.
    public struct Totals: Sendable, Equatable {
        public var eventsEmitted = 0
        public var eventsDelivered = 0
        public var eventsDropped = 0
        public var restarts = 0

        public init() {}
    }

    public var pid: Int32
    /// Monotonic time of the snapshot, and seconds since the supervisor started.
    public var takenAt: Double
    public var uptime: Double
    public var stopping: Bool
    public var processes: [Process]
    public var disabled: [DisabledProcess]
    /// Nil: the store is off.
    public var store: StoreStatistics?
    public var storePath: String?
    public var outputs: [OutputStatistics]
    public var forkServer: JSONValue
    public var totals: Totals
    /// Chat messages handed to the chatbot.
    public var chatRequests: Int
    /// The tasks' figures (see ``TaskCoordinator``).
    public var tasks: [TaskFigures] = []
    /// What became of the task notifications (nil: the agent runs no work layer).
    public var notifications: NotificationStatistics?
    /// The schedules' figures (see ``Scheduler``).
    public var schedules: [ScheduleFigures] = []
    /// The executors' figures (nil: no executor is declared).
    public var assignment: AssignmentFigures?
    /// The supervisor's loop: the longest turn (seconds) and the turns of 10 ms or more.
    public var loop = LoopFigures()

    /// How long the supervisor's loop has been busy in one turn (see ``EventLoop``).
    public struct LoopFigures: Sendable {
        public var longestTurn: Double = 0
        public var slowTurns = 0

        package var json: JSONValue {
            ["longest_turn": .number(JSONNumber(longestTurn)), "slow_turns": .number(JSONNumber(slowTurns))]
        }

        package init(longestTurn: Double = 0, slowTurns: Int = 0) {
            self.longestTurn = longestTurn
            self.slowTurns = slowTurns
        }
    }

    /// Whether the fronts (the HTTP server) are still starting: `agent-control start` waits for
    /// them, since one that cannot listen stops the agent.
    public var frontsStarting = false
    /// The fleet's database as `status` shows it (nil: not in a fleet).
    public var fleet: JSONValue?
    /// Why the fleet's database is not being written to (nil: it is, or no fleet).
    public var fleetDegraded: String?

    package init(pid: Int32, takenAt: Double, uptime: Double, stopping: Bool, processes: [Process], disabled: [DisabledProcess], store: StoreStatistics? = nil, storePath: String? = nil, outputs: [OutputStatistics], forkServer: JSONValue, totals: Totals, chatRequests: Int, tasks: [TaskFigures] = [], notifications: NotificationStatistics? = nil, schedules: [ScheduleFigures] = [], assignment: AssignmentFigures? = nil, loop: LoopFigures = LoopFigures(), fleet: JSONValue? = nil, fleetDegraded: String? = nil) {
        self.pid = pid
        self.takenAt = takenAt
        self.uptime = uptime
        self.stopping = stopping
        self.processes = processes
        self.disabled = disabled
        self.store = store
        self.storePath = storePath
        self.outputs = outputs
        self.forkServer = forkServer
        self.totals = totals
        self.chatRequests = chatRequests
        self.tasks = tasks
        self.notifications = notifications
        self.schedules = schedules
        self.assignment = assignment
        self.loop = loop
        self.fleet = fleet
        self.fleetDegraded = fleetDegraded
    }
}

extension AgentSnapshot {
    /// The answer of `status` (what `agent-control status --json` prints). Reads each worker's
    /// CPU time and memory from /proc: call it off the loop where it can be.
    public var statusAnswer: JSONValue {
        var answer: JSONObject = [
            "ok": true, "pid": .number(JSONNumber(Int(pid))), "uptime": .number(JSONNumber(uptime)),
            "stopping": .bool(stopping), "processes": .array(processes.map(\.statusJSON) + disabled.map(\.json)),
        ]
        answer["store"] = storeJSON
        answer["outputs"] = .array(outputs.map(\.jsonValue))
        answer["fork_server"] = forkServer
        answer["loop"] = loop.json
        if let notifications { answer["notifications"] = notifications.jsonValue }
        if let assignment { answer["assignment"] = assignment.json }
        if let fleet { answer["fleet"] = fleet }
        if frontsStarting { answer["fronts_starting"] = true }
        return .object(answer)
    }

    package var storeJSON: JSONValue { Self.storeJSON(store, path: storePath) }

    /// The store's figures as `status` shows them.
    package static func storeJSON(_ stats: StoreStatistics?, path storePath: String?) -> JSONValue {
        guard let stats, let storePath else { return ["enabled": false] }
        var object: JSONObject = [
            "enabled": true, "path": .string(storePath), "committed": .number(JSONNumber(stats.committed)),
            "transactions": .number(JSONNumber(stats.batches)),
            "pending": .number(JSONNumber(stats.pending)), "dropped": .number(JSONNumber(stats.dropped)),
            "dropped_chat_lines": .number(JSONNumber(stats.droppedChatLines)),
            "dropped_history_lines": .number(JSONNumber(stats.droppedHistoryLines)),
            "expired": .number(JSONNumber(stats.expired)), "bytes_in_use": .number(JSONNumber(stats.bytesInUse)),
            "write_errors": .number(JSONNumber(stats.writeErrors)),
            "retained": .number(JSONNumber(stats.retained)), "lost_changes": .number(JSONNumber(stats.lostChanges)),
        ]
        if let degraded = stats.degraded { object["degraded"] = .string(degraded) }
        return .object(object)
    }
}

extension AgentSnapshot.Process {
    /// The process as `status` shows it, with its worker's CPU time and resident memory.
    public var statusJSON: JSONValue {
        guard case .object(var object) = info.json else { return info.json }
        if let old = replacing {
            object["state"] = "stopping"
            object["pid"] = .number(JSONNumber(Int(old.pid)))
            object["restarting"] = true
            if let since = old.stateSeconds { object["state_seconds"] = .number(JSONNumber((since * 1000).rounded() / 1000)) }
        }
        if let pid = workerPid, let usage = ProcessUsage.recent(pid) {
            object["cpu_seconds"] = .number(JSONNumber((usage.cpuSeconds * 100).rounded() / 100))
            object["rss_bytes"] = .number(JSONNumber(usage.rssBytes))
        }
        return .object(object)
    }
}
