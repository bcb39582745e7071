import Foundation
import JSONSchema
import Logging

/// What an agent in a fleet uses of the shared database (AgentFleet's PostgreSQL store,
/// linked by agent-control only): the shared run and schedule stores, wakeups, membership.
/// The supervisor's loop never waits on it: writes are handed over, reads are `async`.
package protocol FleetBackend: AnyObject, Sendable {
    var settings: FleetSettings { get }
    var runStore: any RunStore { get }
    var scheduleStore: any ScheduleStore { get }
    /// Workflow runs and their step logs, each held by one agent under a lease.
    var workflowStore: any SharedWorkflowStore { get }
    /// The events published to the fleet and the subscribers' cursors.
    var eventStore: any FleetEventStore { get }
    /// Shared memory: the same keys for every agent of the fleet.
    var memoryStore: any MemoryStore { get }
    /// Calls `wake` (on any thread) when runs may be waiting: a hint only (NOTIFY), the
    /// agent polls too.
    func listen(_ wake: @escaping @Sendable () -> Void)
    /// Records this agent's heartbeat (fire-and-forget).
    func beat(_ member: FleetMember)
    /// Applies `retention` to the shared runs, workflow runs and schedule history, now and
    /// periodically until ``close()``, in the background (the loop does not wait).
    func retain(_ retention: RunRetention)
    /// Every agent of the fleet, as last heard of.
    func members() async throws -> [FleetMember]
    /// How the database is: nil when well, else why not; and what waits to be written.
    var condition: FleetCondition { get }
    /// Writes what waits (for a while) and closes the connections.
    func close()
    /// Whether the agent has joined the fleet: its database answered once (it may be away
    /// since). Until then the fleet is degraded and nothing of it is read or written.
    var isJoined: Bool { get }
    /// Whether the first attempt to join has ended (joined, or failed: the fleet is degraded).
    var hasTriedToJoin: Bool { get }
    /// Calls `action` (on any thread) once joined: at once if it is.
    func whenJoined(_ action: @escaping @Sendable () -> Void)
}

/// How the fleet's database is, for `status`, `fleet status` and `/readyz`.
package struct FleetCondition: Sendable, Equatable {
    /// Why it is not written to (nil: it is).
    package var degraded: String?
    /// Changes waiting for it.
    package var backlog: Int
    /// Changes dropped because the backlog was full.
    package var dropped: Int
    /// Changes of runs refused because this agent's claim had passed to another.
    package var refused: Int

    package init(degraded: String?, backlog: Int, dropped: Int, refused: Int) {
        self.degraded = degraded
        self.backlog = backlog
        self.dropped = dropped
        self.refused = refused
    }
}

/// One agent of a fleet as its heartbeat describes it.
package struct FleetMember: Sendable, Equatable {
    package var agentID: String
    package var host: String
    package var version: String
    package var started: Double
    /// The last heartbeat (the database's clock).
    package var heartbeat: Double
    /// Seconds since the last heartbeat, when read (the database's clock).
    package var silence: Double = 0
    /// Process names → state.
    package var processes: [String: String]
    /// Task runs this agent is carrying out.
    package var running: Int
    /// The host's load average over a minute.
    package var load: Double
    /// Seconds between its heartbeats.
    package var interval: Double
    /// Its declared executors (none: each task runs on its implicit executor).
    package var executors: [Executor] = []
    /// The tasks it carries out, by name: what the fleet's assignment strategies choose by.
    package var tasks: [String: TaskRoom] = [:]

    /// A task an agent carries out, as its heartbeat tells of it.
    package struct TaskRoom: Sendable, Equatable {
        package var running: Int
        package var maxConcurrent: Int
        /// The highest `priority_boost` of its executors taking the task (0 without).
        package var priorityBoost: Int
        /// The `priority_preference`s of its executors taking the task.
        package var preferences: [TaskRun.Priority]
        /// The label sets of its executors taking the task (empty: it runs on its own worker,
        /// and takes only runs that require no label); nil: not told (an older agent).
        package var labels: [[String: String]]?

        package init(running: Int, maxConcurrent: Int, priorityBoost: Int = 0, preferences: [TaskRun.Priority] = [], labels: [[String: String]]? = []) {
            self.running = running
            self.maxConcurrent = maxConcurrent
            self.priorityBoost = priorityBoost
            self.preferences = preferences
            self.labels = labels
        }

        /// Whether the agent can take a run requiring `require` (as its claims judge).
        package func carries(_ require: [String: String]) -> Bool {
            guard !require.isEmpty, let labels else { return true }
            return labels.contains { set in require.allSatisfy { set[$0.key] == $0.value } }
        }

        package var json: JSONValue {
            var object: JSONObject = ["running": .number(JSONNumber(running)), "max_concurrent": .number(JSONNumber(maxConcurrent)),
                                      "priority_boost": .number(JSONNumber(priorityBoost)), "priority_preferences": .array(preferences.map { .string($0.rawValue) })]
            if let labels { object["labels"] = .array(labels.map { set in .object(JSONObject(set.sorted { $0.key < $1.key }.map { ($0.key, .string($0.value)) })) }) }
            return .object(object)
        }

        package init?(_ json: JSONValue) {
            guard let limit = json["max_concurrent"]?.numberValue?.intValue else { return nil }
            running = json["running"]?.numberValue?.intValue ?? 0
            maxConcurrent = limit
            priorityBoost = json["priority_boost"]?.numberValue?.intValue ?? 0
            preferences = (json["priority_preferences"]?.arrayValue ?? []).compactMap { $0.stringValue.flatMap(TaskRun.Priority.init(rawValue:)) }
            labels = json["labels"]?.arrayValue.map { sets in
                sets.compactMap { set in set.objectValue.map { object in Dictionary(object.compactMap { key, value in value.stringValue.map { (key, $0) } }) { first, _ in first } } }
            }
        }
    }

    /// A declared executor as the heartbeat tells of it.
    package struct Executor: Sendable, Equatable {
        package var name: String
        package var running: Int
        package var maxConcurrent: Int
        package var draining: Bool

        package init(name: String, running: Int, maxConcurrent: Int, draining: Bool) {
            self.name = name
            self.running = running
            self.maxConcurrent = maxConcurrent
            self.draining = draining
        }

        package var json: JSONValue {
            ["name": .string(name), "running": .number(JSONNumber(running)), "max_concurrent": .number(JSONNumber(maxConcurrent)), "draining": .bool(draining)]
        }

        package init?(_ json: JSONValue) {
            guard let name = json["name"]?.stringValue else { return nil }
            self.name = name
            running = json["running"]?.numberValue?.intValue ?? 0
            maxConcurrent = json["max_concurrent"]?.numberValue?.intValue ?? 0
            draining = json["draining"]?.boolValue ?? false
        }
    }

    package init(agentID: String, host: String, version: String, started: Double, heartbeat: Double, processes: [String: String],
                 running: Int, load: Double, interval: Double) {
        self.agentID = agentID
        self.host = host
        self.version = version
        self.started = started
        self.heartbeat = heartbeat
        self.processes = processes
        self.running = running
        self.load = load
        self.interval = interval
    }

    /// Lost: silent for three heartbeats.
    package var isLost: Bool { silence > 3 * interval }

    /// What the heartbeat row keeps besides its columns.
    package var detail: JSONValue {
        ["processes": .object(JSONObject(processes.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })), "running": .number(JSONNumber(running)),
         "load": .number(JSONNumber(load)), "interval": .number(JSONNumber(interval)), "executors": .array(executors.map(\.json)),
         "tasks": .object(JSONObject(tasks.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) }))]
    }

    /// Reads what ``detail`` wrote (of an agent of this or an older version).
    package mutating func read(detail: JSONValue) {
        executors = (detail["executors"]?.arrayValue ?? []).compactMap(Executor.init)
        tasks = [:]
        for (name, room) in detail["tasks"]?.objectValue ?? [:] { tasks[name] = TaskRoom(room) }
    }

    package var json: JSONValue {
        ["agent_id": .string(agentID), "host": .string(host), "version": .string(version), "started": .string(TaskRun.iso(started)),
         "last_heartbeat": .string(TaskRun.iso(heartbeat)), "seconds_since_heartbeat": .number(JSONNumber((silence * 1000).rounded() / 1000)),
         "state": .string(isLost ? "lost" : "alive"), "processes": .object(JSONObject(processes.sorted { $0.key < $1.key }.map { ($0.key, JSONValue.string($0.value)) })),
         "running_runs": .number(JSONNumber(running)), "load": .number(JSONNumber((load * 100).rounded() / 100)),
         "executors": .array(executors.map(\.json)), "tasks": .object(JSONObject(tasks.sorted { $0.key < $1.key }.map { ($0.key, $0.value.json) }))]
    }
}

/// The fleet's database for an agent (agent-control passes AgentFleet's), joining when it
/// answers: throws only for settings it cannot use.
package typealias FleetConnector = @Sendable (FleetSettings, Logger) throws -> any FleetBackend
