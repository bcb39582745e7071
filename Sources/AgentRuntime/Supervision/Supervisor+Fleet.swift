import AgentLoop
import AgentSupervision
import AgentVersion
import AgentWork
import Foundation
import JSONSchema

/// A fleet's membership and schedules' leadership, on the loop: a heartbeat every
/// `heartbeat` seconds, and a bid for the leadership every third of the lease. The leader
/// loads the schedules' state from the shared database when it takes over (what the previous
/// leader committed), then fires; an agent that loses it stops firing at once, and the
/// database refuses what it commits after.
extension Supervisor {
    /// Starts the heartbeat and the bids (after the tasks and schedules are set up).
    func startFleet() {
        guard let fleet else { return }
        logger.info("fleet: agent \(fleet.settings.agentID) on \(fleet.settings.displayURL) (lease \(ProcessPolicy.format(fleet.settings.lease)) s)")
        beat()
        seekScheduleLeadership()
        startFleetEvents()
    }

    func stopFleet() {
        for timer in fleetTimers.values { loop.cancel(timer) }
        fleetTimers = [:]
    }

    private func beat() {
        guard let fleet, !stopping else { return }
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count)
        let host = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        let load = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)).flatMap { Double($0.split(separator: " ").first ?? "") } ?? 0
        let started = Date().timeIntervalSince1970 - (EventLoop.now() - startedAt)
        var member = FleetMember(agentID: fleet.settings.agentID, host: host, version: AgentVersion.current, started: started,
                                 heartbeat: 0, processes: Dictionary(processes.map { ($0.name, SupervisedProcessInfo($0).stateName) }, uniquingKeysWith: { a, _ in a }),
                                 running: tasks?.active.count ?? 0, load: load, interval: fleet.settings.heartbeat)
        member.executors = (tasks?.pool.members ?? []).map {
            FleetMember.Executor(name: $0.name, running: $0.running, maxConcurrent: $0.maxConcurrent, draining: $0.draining)
        }
        member.tasks = tasks?.fleetTaskRooms ?? [:]
        fleet.beat(member)
        readFleetMembers()
        fleetTimers["beat"] = loop.schedule(after: fleet.settings.heartbeat) { [weak self] in self?.beat() }
    }

    /// The members as the database has them, for the strategies choosing among the agents
    /// (``FleetAssigner``); one read at a time, none when no choice is made, and none while the
    /// database is away (the last members known stay; a read would only wait in the pool).
    private func readFleetMembers() {
        guard let fleet, fleet.settings.assignmentHold > 0, !fleetMembersReading, fleet.condition.degraded == nil else { return }
        fleetMembersReading = true
        let inbox = loop.inbox
        let this = LoopBound(value: self)
        Task {
            let members = try? await fleet.members()
            inbox.post {
                let supervisor = this.value
                supervisor.fleetMembersReading = false
                // The database away: the last members known stay.
                if let members { supervisor.tasks?.fleetMembersRead(members) }
            }
        }
    }

    /// The schedules' leadership as this agent's loop knows it.
    struct LeadershipBid {
        /// A bid awaits the database's answer (one at a time: the database away must not pile them up).
        var inFlight = false
        /// The loop's clock when the last granted bid was sent plus the lease: the leadership
        /// surely holds until then, and may not after.
        var holdsUntil = 0.0
    }

    private func seekScheduleLeadership() {
        guard let fleet, let scheduler, !stopping else { return }
        let lease = fleet.settings.lease
        fleetTimers["lead"] = loop.schedule(after: lease / 3) { [weak self] in self?.seekScheduleLeadership() }
        // The database does not answer (away, or a partition): a leader whose lease may have
        // lapsed stops firing now, rather than when the database refuses its fires.
        if scheduler.leadership != nil, EventLoop.now() >= leadershipBid.holdsUntil {
            logger.warning("fleet: this agent no longer leads the schedules (no renewal of its lease answered within \(ProcessPolicy.format(lease)) s); it stops firing")
            scheduler.stepDown()
        }
        guard !leadershipBid.inFlight else { return }
        leadershipBid.inFlight = true
        let sent = EventLoop.now()
        let store = fleet.scheduleStore
        let holder = fleet.settings.agentID
        let inbox = loop.inbox
        let this = LoopBound(value: self)
        let wasLeading = scheduler.leadership != nil
        Task {
            var leadership: Leadership?
            var saved: [String: ScheduleState]?
            do {
                leadership = try await store.lead(holder: holder, lease: lease)
                // Taking over: what the previous leader committed, read after the lease is ours.
                if leadership != nil, !wasLeading { saved = try await store.loadStates() }
            } catch {
                leadership = nil
                saved = nil
            }
            let states = saved, taken = leadership
            inbox.post {
                let supervisor = this.value
                supervisor.leadershipBid.inFlight = false
                if taken != nil { supervisor.leadershipBid.holdsUntil = sent + lease }
                supervisor.tookLeadership(taken, saved: states, wasLeading: wasLeading)
            }
        }
    }

    private func tookLeadership(_ leadership: Leadership?, saved: [String: ScheduleState]?, wasLeading: Bool) {
        guard let scheduler, !stopping else { return }
        if let leadership {
            // Stepped down meanwhile (the answer came too late): taken over anew at the next
            // bid, with the state read then.
            if wasLeading, scheduler.leadership == nil { return }
            if scheduler.leadership == nil {
                if let saved {
                    logger.notice("fleet: this agent leads the schedules (fence \(leadership.fence))")
                    scheduler.leadership = leadership
                    scheduler.start(scheduler.fleetDefinitions, saved: saved)
                }
            } else {
                scheduler.leadership = leadership
            }
        } else if scheduler.leadership != nil {
            logger.warning("fleet: this agent no longer leads the schedules (its lease lapsed, or the database is away); it stops firing")
            scheduler.stepDown()
        }
    }

    /// `fleet status`: the database's condition now, and the members as the database has them.
    func fleetStatus(respond: @escaping (JSONValue) -> Void) {
        guard let fleet else {
            // Not a failure of the agent: there is no fleet here to show (404 over HTTP).
            return respond(["ok": false, "code": "not_found",
                            "error": "this agent is not in a fleet: add \"fleet\": {\"postgres\": \"postgres://USER@HOST/DATABASE\", \"password\": \"${env:PGPASSWORD}\", \"agent_id\": \"NAME\"} to its settings"])
        }
        let condition = fleet.condition
        var answer: JSONObject = ["ok": true, "agent_id": .string(fleet.settings.agentID), "database": .string(fleet.settings.displayURL),
                                  "backlog": .number(JSONNumber(condition.backlog)), "dropped": .number(JSONNumber(condition.dropped)),
                                  "refused": .number(JSONNumber(condition.refused))]
        if let degraded = condition.degraded { answer["degraded"] = .string(degraded) }
        answer["events"] = fleetEventsStatus
        let reply = LoopBound(value: respond)
        let inbox = loop.inbox
        let done = LoopBound(value: answer)
        Task {
            let result = await Result { try await fleet.members() }
            inbox.post {
                var answer = done.value
                switch result {
                case .success(let members):
                    answer["agents"] = .array(members.map(\.json))
                case .failure(let error):
                    // The database away: what this agent knows, and why the rest is missing.
                    answer["agents"] = []
                    answer["degraded"] = .string(fleet.condition.degraded ?? "cannot read the fleet's members: \(error)")
                }
                reply.value(.object(answer))
            }
        }
    }
}
