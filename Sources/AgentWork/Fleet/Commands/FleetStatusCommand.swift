import AgentBase
import AgentLoop
import JSONSchema

/// `fleet_status`: the fleet this agent belongs to, as ``FleetBridge`` sees it.
package enum FleetStatusCommand: @preconcurrency AgentCommand {
    /// The fleet as this agent sees it: its database's condition, its events, the members.
    package struct Answer: Encodable, Sendable {
        package let ok = true
        package var agentID: String
        package var database: String
        package var backlog: Int
        package var dropped: Int
        package var refused: Int
        /// Why the database is not written to, or its members could not be read.
        package var degraded: String?
        /// The events this agent publishes and receives (null without a relay).
        package var events: JSONValue
        package var agents: [JSONValue]
        /// `degraded` came with the members (the database away when they were read): written
        /// after them, where the answer always had it then.
        package var degradedReadingMembers = false

        package init(agentID: String, database: String, backlog: Int, dropped: Int, refused: Int, degraded: String?, events: JSONValue,
                     agents: [JSONValue] = []) {
            self.agentID = agentID
            self.database = database
            self.backlog = backlog
            self.dropped = dropped
            self.refused = refused
            self.degraded = degraded
            self.events = events
            self.agents = agents
        }

        enum CodingKeys: String, CodingKey {
            case ok, agentID = "agent_id", database, backlog, dropped, refused, degraded, events, agents
        }

        package func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(ok, forKey: .ok)
            try container.encode(agentID, forKey: .agentID)
            try container.encode(database, forKey: .database)
            try container.encode(backlog, forKey: .backlog)
            try container.encode(dropped, forKey: .dropped)
            try container.encode(refused, forKey: .refused)
            if !degradedReadingMembers { try container.encodeIfPresent(degraded, forKey: .degraded) }
            try container.encode(events, forKey: .events)
            try container.encode(agents, forKey: .agents)
            if degradedReadingMembers { try container.encodeIfPresent(degraded, forKey: .degraded) }
        }
    }

    package static let name = "fleet_status"
    package static let summary = "The fleet this agent belongs to: its database and how it is, every agent (host, version, processes, executors, runs, load, last heartbeat; lost when its heartbeat lapsed), and the events this agent publishes and receives."
    package static let routes: [CommandRoute] = [.get("/api/fleet")]
    package static let mutating = false
    static let memberSchema: JSONValue = CommandSchema.object([
        "agent_id": ["type": "string"], "host": ["type": "string"], "version": ["type": "string"],
        "started": ["type": "string", "format": "date-time"],
        "last_heartbeat": ["type": "string", "format": "date-time"],
        "seconds_since_heartbeat": ["type": "number", "description": "By the database's clock."],
        "state": ["enum": ["alive", "lost"], "description": "lost: no heartbeat for three heartbeat intervals."],
        "processes": ["type": "object", "additionalProperties": ["type": "string"], "description": "Process name → state."],
        "running_runs": ["type": "integer", "description": "Task runs the agent is carrying out."],
        "load": ["type": "number", "description": "The host's load average over a minute."],
        "executors": ["type": "array", "description": "Its declared executors (none: each task runs on its implicit executor).",
                      "items": CommandSchema.object([
                          "name": ["type": "string"], "running": ["type": "integer"], "max_concurrent": ["type": "integer"], "draining": ["type": "boolean"],
                      ], required: ["name", "running", "max_concurrent", "draining"])],
    ], required: ["agent_id", "host", "version", "last_heartbeat", "state"], open: true)

    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "agent_id": ["type": "string"], "database": ["type": "string"],
        "degraded": ["type": "string", "description": "Why the database is not written to, when it is not."],
        "backlog": ["type": "integer", "description": "Changes waiting for the database."],
        "dropped": ["type": "integer"], "refused": ["type": "integer"],
        "agents": ["type": "array", "items": memberSchema],
        "events": CommandSchema.object([
            "published_types": ["type": "array", "items": ["type": "string"], "description": "What this agent publishes (fleet.publish)."],
            "published": ["type": "integer", "description": "Events written to the database since the start."],
            "backlog": ["type": "integer", "description": "Events waiting to be written."],
            "dropped": ["type": "integer", "description": "Events dropped while the database was away and the backlog full."],
            "subscribed_types": ["type": "array", "items": ["type": "string"], "description": "The fleet:TYPE its monitors subscribe to."],
            "received": ["type": "integer", "description": "Events received from the fleet since the start."],
            "skipped": ["type": "integer", "description": "Events of the fleet skipped since the start: larger than this agent's events.max_payload_bytes."],
            "cursor": ["type": "integer", "description": "The last event handed to its monitors."],
            "recorded_cursor": ["type": "integer", "description": "Where it resumes after a restart."],
            "failing": ["type": "string", "description": "Why events cannot be written or read, while they cannot."],
        ], required: ["published_types", "published", "backlog", "dropped", "subscribed_types", "received"]),
    ], required: ["ok", "agent_id", "database", "backlog", "dropped", "refused", "events", "agents"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        let events: JSONValue = ["published_types": ["trade"], "published": 4, "backlog": 0, "dropped": 0, "subscribed_types": [], "received": 0]
        return [([:], Answer(agentID: "a1", database: "postgres://agent@db/fleet", backlog: 0, dropped: 0, refused: 0, degraded: "the database is away",
                             events: events,
                             agents: [["agent_id": "a1", "host": "h1", "version": "1.0", "last_heartbeat": "2026-11-24T07:00:00Z", "state": "alive"]]))]
    }

    @LoopActor package static func run(_ request: NoFields, on host: FleetBridge, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.status(respond: respond)
    }
}
