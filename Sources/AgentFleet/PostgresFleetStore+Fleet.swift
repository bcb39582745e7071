#if Fleet
import AgentBase
import AgentWork
import Foundation
import JSONSchema
import Logging
import PostgresNIO

/// What an agent of a fleet uses: the stores, wakeups (LISTEN agent_runs), heartbeats
/// (table `fleet_agents`) and the database's condition.
extension PostgresFleetStore: FleetBackend {
    /// For agent-control: the store at once, joining the fleet when its database answers
    /// (``open(_:logger:)``): an agent never needs its fleet's database to start.
    package static let connector: FleetConnector = { settings, logger in
        try PostgresFleetStore.open(settings, logger: logger)
    }

    package var isJoined: Bool { join.isJoined }

    package var hasTriedToJoin: Bool { join.hasTried }

    package func whenJoined(_ action: @escaping @Sendable () -> Void) { join.whenJoined(action) }

    package var runStore: any RunStore { runs }
    package var scheduleStore: any ScheduleStore { schedules }
    package var eventStore: any FleetEventStore { events }
    package var workflowStore: any SharedWorkflowStore { workflows }
    package var memoryStore: any MemoryStore { memory }

    package var condition: FleetCondition {
        let figures = health
        return FleetCondition(degraded: figures.degraded, backlog: figures.backlog, dropped: figures.dropped, refused: figures.refused)
    }

    package func listen(_ wake: @escaping @Sendable () -> Void) {
        writer.listen(on: "agent_runs", wake)
    }

    /// The longest a heartbeat waits for the database: three heartbeats (the members take an
    /// agent silent for as long for lost), at least 5 s.
    var beatDeadline: Double { max(3 * settings.heartbeat, 5) }

    /// Writes a heartbeat in a task of its own (the loop does not wait); one at a time. One the
    /// database never answers (its connection's server process stopped or cut off unseen) is
    /// given up at ``beatDeadline``: it held every later heartbeat back, and the agent was shown
    /// lost, its reads refused, for as long as the agent ran.
    package func beat(_ member: FleetMember) {
        let writer = writer, deadline = beatDeadline
        Task {
            guard await writer.beginBeat() else { return }
            var problem: String?
            var answered = false
            do {
                let takeOver = beatTakesOver.load(ordering: .relaxed)
                let written = try await PostgresFleetStore.firstOf(deadline) { [self] in try await writeBeat(member, takingOver: takeOver) }
                if written {
                    beatTakesOver.store(false, ordering: .relaxed)
                } else {
                    answered = true
                    problem = "another agent wrote the heartbeat of agent_id \"\(settings.agentID)\" since this one's last: two agents have this agent_id; give each one of its own and restart this one"
                }
            } catch {
                problem = FleetStoreError.describe(error)
            }
            await writer.endBeat(problem: problem, answered: answered)
        }
    }

    /// Writes the heartbeat's row: whoever wrote it last when `takingOver`, else only while it
    /// is still this store's (its instance in the row's data). Whether it was written.
    private func writeBeat(_ member: FleetMember, takingOver: Bool) async throws -> Bool {
        let rows = try await client.query("""
            INSERT INTO fleet_agents (agent_id, host, version, started, heartbeat, data)
            VALUES (\(member.agentID), \(member.host), \(member.version), \(member.started), \(unescaped: PostgresMigrations.now),
                    \(beatDetail(member)))
            ON CONFLICT (agent_id) DO UPDATE SET host = EXCLUDED.host, version = EXCLUDED.version, started = EXCLUDED.started,
                heartbeat = EXCLUDED.heartbeat, data = EXCLUDED.data
                WHERE \(takingOver) OR strpos(fleet_agents.data, \(instance)) > 0
            RETURNING agent_id
            """, logger: logger)
        var written = false
        for try await _ in rows.decode(String.self) { written = true }
        return written
    }

    /// Seconds between two passes of the retention.
    static let retentionInterval = 60.0

    /// Every agent prunes (each minute, as each deletes its own published events): deleting
    /// what is past the limits is the same whoever does it first, and no agent is needed for it.
    package func retain(_ retention: RunRetention) {
        let runs = runs, workflows = workflows, schedules = schedules, logger = logger, join = join
        writer.addBackgroundTask(Task {
            await join.wait()
            while !Task.isCancelled {
                do {
                    try await retention.apply(runs: runs, workflows: workflows, schedules: schedules)
                } catch {
                    logger.debug("fleet: the retention's pass failed (\(FleetStoreError.describe(error))); again in \(Int(Self.retentionInterval)) s")
                }
                try? await Task.sleep(for: .seconds(Self.retentionInterval))
            }
        })
    }

    /// The most bytes of a member's detail read (1,000 executors take some 70 KB): a 20 MB row
    /// of other hands, read at every heartbeat by every agent, cost each a fifth of a core and
    /// hundreds of MB. A larger one is read as empty.
    static let largestMemberDetail = 1 << 20

    package func members() async throws -> [FleetMember] {
        try await writer.reading { [self] in
            let rows = try await client.query("""
                SELECT left(agent_id, 200), left(host, 200), left(version, 200), started, heartbeat, \(unescaped: PostgresMigrations.now) - heartbeat,
                    CASE WHEN octet_length(data) <= \(Self.largestMemberDetail) THEN data ELSE '{}' END
                FROM fleet_agents ORDER BY agent_id
                """, logger: logger)
            var members: [FleetMember] = []
            for try await (id, host, version, started, heartbeat, silence, data) in rows.decode((String, String, String, Double, Double, Double, String).self) {
                let detail = (try? JSONValue.parse(Data(data.utf8))) ?? .object([:])
                var processes: [String: String] = [:]
                for (name, state) in detail["processes"]?.objectValue ?? [:] { processes[name] = state.stringValue ?? "" }
                var member = FleetMember(agentID: id, host: host, version: version, started: started, heartbeat: heartbeat, processes: processes,
                                         running: detail["running"]?.numberValue?.intValue ?? 0, load: detail["load"]?.numberValue?.doubleValue ?? 0,
                                         interval: detail["interval"]?.numberValue?.doubleValue ?? settings.heartbeat)
                member.silence = silence
                member.read(detail: detail)
                members.append(member)
            }
            return members
        }
    }
}
#endif
