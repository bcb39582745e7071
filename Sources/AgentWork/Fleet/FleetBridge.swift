import AgentBase
import AgentLoop
import AgentSupervision
import AgentCore
import Foundation
import JSONSchema
import Logging

/// An agent's side of a fleet, on the loop: membership (a heartbeat every `heartbeat` seconds),
/// the schedules' leadership (a bid every third of the lease), `fleet status`, and events
/// across hosts (see ``FleetEventRelay``). Without a fleet (``join(_:)`` never given one) it
/// does nothing.
///
/// The leader loads the schedules' state from the shared database when it takes over (what
/// the previous leader committed), then fires; an agent that loses it stops firing at once,
/// and the database refuses what it commits after.
@LoopActor
package final class FleetBridge {
    /// The schedules' leadership as this agent's loop knows it.
    struct LeadershipBid {
        /// A bid awaits the database's answer (one at a time: the database away must not pile them up).
        var inFlight = false
        /// The loop's clock when the last granted bid was sent plus the lease: the leadership
        /// surely holds until then, and may not after.
        var holdsUntil = 0.0
    }

    /// The fleet's shared database (nil: this agent keeps its runs and schedules to itself).
    package private(set) var backend: (any FleetBackend)?
    /// Event types this agent publishes to the fleet (`fleet.publish`); nothing else leaves it.
    package private(set) var published: Set<String> = []
    /// The fleet's events this agent's monitors subscribe to (nil without a fleet).
    package private(set) var relay: FleetEventRelay?
    private var timers: [String: Int] = [:]
    private var bid = LeadershipBid()
    /// A read of the fleet's members is in flight (``readMembers()``).
    private var membersReading = false
    /// The fleet's work has begun (``joined()``).
    private var hasJoined = false
    /// The loop's clock at ``start()``.
    private var startedLoop = 0.0

    unowned let work: WorkHost
    unowned let events: any EventPublisher
    /// The loop's clock when the agent started (members tell when they started).
    private let startedAt: Double
    /// This agent's version, as its heartbeat tells it.
    private let version: String
    /// The agent's processes and their state (`running`, `backoff`…), for the heartbeat.
    package var processStates: () -> [String: String] = { [:] }

    private var loop: EventLoop { work.host.loop }
    private var logger: Logger { work.host.logger }
    private var stopping: Bool { work.host.isStopping }

    package init(work: WorkHost, events: any EventPublisher, startedAt: Double, version: String) {
        self.work = work
        self.events = events
        self.startedAt = startedAt
        self.version = version
    }

    /// Joins the fleet whose database `backend` is (nil: none); before the work is set up.
    package func join(_ backend: (any FleetBackend)?) {
        self.backend = backend
        published = Set(backend?.settings.publish ?? [])
        relay = backend.map { FleetEventRelay(backend: $0, work: work, events: events) }
        // Each source looks up again whether the type it emits is published.
        events.routingChanged()
    }

    /// Starts the heartbeat, the bids and the fleet's events (after the work is set up), now
    /// if the fleet's database has answered, else when it does: the local processes never
    /// wait for it (the store logs once that it cannot reach it; ``joined()`` logs the join).
    package func start() {
        guard let backend else { return }
        startedLoop = EventLoop.now()
        if backend.isJoined { return joined() }
        let inbox = loop.inbox
        backend.whenJoined { inbox.post { self.joined() } }
    }

    /// The fleet's database answered: the fleet's work begins (claims from the shared queue,
    /// then — once the workflows hold their start token — membership, the schedules'
    /// leadership and the fleet's events). The join is logged then: everything that needs
    /// the fleet answers from that line on.
    private func joined() {
        guard backend != nil, !stopping, !hasJoined else { return }
        hasJoined = true
        work.fleetJoined { [weak self] in self?.begin() }
    }

    private func begin() {
        guard let backend, !stopping else { return }
        let late = EventLoop.now() - startedLoop
        let after = late >= 1 ? "; joined \(ProcessPolicy.format(late.rounded())) s after the start (the database answers)" : ""
        logger.info("fleet: agent \(backend.settings.agentID) on \(backend.settings.displayURL) (lease \(ProcessPolicy.format(backend.settings.lease)) s)\(after)")
        beat()
        seekScheduleLeadership()
        if !published.isEmpty {
            logger.info("fleet: publishing event types \(published.sorted().joined(separator: ", "))")
        }
        relay?.start()
    }

    /// The agent stops: no more beats, bids or reads.
    package func stop() {
        for timer in timers.values { loop.cancel(timer) }
        timers = [:]
        relay?.stop()
    }

    /// Writes what waits (for a while) and closes the connections.
    package func close() { backend?.close() }

    /// Hands a routed event of a published type to the fleet's store (written by its writer).
    package func publish(type: String, source: String, timeNanoseconds: Int64, payload: UnsafeRawBufferPointer) {
        guard let backend else { return }
        backend.eventStore.publish(FleetEvent(agentID: backend.settings.agentID, source: source, type: type,
                                              timeNanoseconds: timeNanoseconds, payload: Array(payload)))
    }

    // MARK: Membership

    private func beat() {
        guard let backend, !stopping else { return }
        let host = TaskNotifier.currentHostName()
        let load = ProcFile.read("/proc/loadavg").flatMap { Double($0.split(separator: " ").first ?? "") } ?? 0
        let started = Date().timeIntervalSince1970 - (EventLoop.now() - startedAt)
        let tasks = work.tasks
        var member = FleetMember(agentID: backend.settings.agentID, host: host, version: version, started: started,
                                 heartbeat: 0, processes: processStates(),
                                 running: tasks?.active.count ?? 0, load: load, interval: backend.settings.heartbeat)
        member.executors = (tasks?.pool.members ?? []).map {
            FleetMember.Executor(name: $0.name, running: $0.running, maxConcurrent: $0.maxConcurrent, draining: $0.draining)
        }
        member.tasks = tasks?.fleetTaskRooms ?? [:]
        backend.beat(member)
        readMembers()
        timers["beat"] = loop.schedule(after: backend.settings.heartbeat) { [weak self] in self?.beat() }
    }

    /// The members as the database has them, for the strategies choosing among the agents
    /// (``FleetAssigner``); one read at a time, none when no choice is made, and none while the
    /// database is away (the last members known stay; a read would only wait in the pool).
    private func readMembers() {
        guard let backend, backend.settings.assignmentHold > 0, !membersReading, backend.condition.degraded == nil else { return }
        membersReading = true
        let inbox = loop.inbox
        Task.detached {
            let members = try? await backend.members()
            inbox.post {
                let bridge = self
                bridge.membersReading = false
                // The database away: the last members known stay.
                if let members { bridge.work.tasks?.fleetMembersRead(members) }
            }
        }
    }

    // MARK: Leadership

    private func seekScheduleLeadership() {
        guard let backend, let scheduler = work.scheduler, !stopping else { return }
        let lease = backend.settings.lease
        timers["lead"] = loop.schedule(after: lease / 3) { [weak self] in self?.seekScheduleLeadership() }
        // The database does not answer (away, or a partition): a leader whose lease may have
        // lapsed stops firing now, rather than when the database refuses its fires.
        if scheduler.leadership != nil, EventLoop.now() >= bid.holdsUntil {
            logger.warning("fleet: this agent no longer leads the schedules (no renewal of its lease answered within \(ProcessPolicy.format(lease)) s); it stops firing")
            scheduler.stepDown()
        }
        guard !bid.inFlight else { return }
        bid.inFlight = true
        let sent = EventLoop.now()
        let store = backend.scheduleStore
        let holder = backend.settings.agentID
        let inbox = loop.inbox
        let wasLeading = scheduler.leadership != nil
        Task.detached {
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
                let bridge = self
                bridge.bid.inFlight = false
                if taken != nil { bridge.bid.holdsUntil = sent + lease }
                bridge.tookLeadership(taken, saved: states, wasLeading: wasLeading)
            }
        }
    }

    private func tookLeadership(_ leadership: Leadership?, saved: [String: ScheduleState]?, wasLeading: Bool) {
        guard let scheduler = work.scheduler, !stopping else { return }
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
            logger.warning("fleet: this agent no longer leads the schedules (its lease lapsed, the database is away, or another agent has taken its agent_id); it stops firing")
            scheduler.stepDown()
        }
    }

    // MARK: Status

    /// `status`'s `fleet` (nil without a fleet): the database's condition and whether this
    /// agent leads the schedules; `degraded`: why the database is not written to (nil: it is).
    package var statusFigures: (json: JSONValue, degraded: String?)? {
        guard let backend else { return nil }
        let condition = backend.condition
        var object: JSONObject = ["agent_id": .string(backend.settings.agentID), "database": .string(backend.settings.displayURL),
                                  "backlog": .number(JSONNumber(condition.backlog)), "dropped": .number(JSONNumber(condition.dropped)),
                                  "refused": .number(JSONNumber(condition.refused)),
                                  "leads_schedules": .bool(work.scheduler?.leadership != nil), "joined": .bool(hasJoined),
                                  "state": .string(!hasJoined ? "joining" : condition.degraded == nil ? "joined" : "degraded")]
        if let degraded = condition.degraded { object["degraded"] = .string(degraded) }
        return (.object(object), condition.degraded)
    }

    /// `fleet status`: the database's condition now, and the members as the database has them.
    package func status(respond: @escaping (Result<FleetStatusCommand.Answer, CommandError>) -> Void) {
        guard let backend else {
            // Not a failure of the agent: there is no fleet here to show (404 over HTTP).
            return respond(.failure(.notFound(
                "this agent is not in a fleet: add \"fleet\": {\"postgres\": \"postgres://USER@HOST/DATABASE\", \"password\": \"${env:PGPASSWORD}\", \"agent_id\": \"NAME\"} to its settings")))
        }
        let condition = backend.condition
        let answer = FleetStatusCommand.Answer(agentID: backend.settings.agentID, database: backend.settings.displayURL, backlog: condition.backlog,
                                               dropped: condition.dropped, refused: condition.refused, degraded: condition.degraded,
                                               events: relay?.status(published: published) ?? .null)
        let reply = LoopOwned(respond)
        let inbox = loop.inbox
        let done = LoopOwned(answer)
        Task.detached {
            let result = await Result { try await backend.members() }
            inbox.post {
                var answer = done.value
                switch result {
                case .success(let members):
                    answer.agents = members.map(\.json)
                case .failure(let error):
                    // The database away: what this agent knows, and why the rest is missing.
                    answer.degradedReadingMembers = answer.degraded == nil
                    answer.degraded = backend.condition.degraded ?? "cannot read the fleet's members: \(error)"
                }
                reply.value(.success(answer))
            }
        }
    }
}
