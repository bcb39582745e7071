#if Fleet
import AgentWork
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The writer of the fleet's run changes and schedule commits, and the watch on the database's
/// health (heartbeats, stalls): an actor, so that its state has one owner instead of a lock.
///
/// The loop never waits for it: ``enqueue(_:)``, ``enqueue(_:done:)`` and ``flush()`` hand
/// over through a ``Handoff`` (a synchronous, ordered yield) that the actor drains, and
/// ``health`` reads what the actor last published. One batch is written per transaction;
/// while the database cannot be reached the changes wait (at most
/// ``FleetSettings/backlogLimit`` runs, the oldest dropped beyond it, counted) and are written
/// when it is back. `done` callbacks run on the writer (any thread), as before.
actor FleetWriter: HandoffReceiver {
    nonisolated let settings: FleetSettings
    nonisolated let client: PostgresClient
    nonisolated let logger: Logger
    nonisolated let handoff = Handoff<Item>()
    /// What ``health`` reads from any thread: the actor publishes it after every change (one
    /// value, one writer; the only lock left).
    private nonisolated let published = Mutex(Published())

    private var pendingRuns: [TaskRun] = []
    private var pendingCommits: [(change: ScheduleCommit, done: @Sendable (Bool) -> Void)] = []
    private var writing = false
    private var closed = false
    private var wake: CheckedContinuation<Void, Never>?
    private var flushWaiters: [CheckedContinuation<Void, Never>] = []
    private var figures = FleetStoreFigures()
    private var background: [Task<Void, Never>] = []
    private var beating = false
    /// Why the last heartbeat failed (the database away while nothing else is written).
    private var beatProblem: String?
    /// Since when the heartbeat in flight, and the batch being written, wait for an answer. A
    /// stopped server does not fail them: postgres-nio's pool keeps them waiting for a
    /// connection until it can make one, so a wait this long is what says the database is away.
    private var beatSince: Date?
    private var writeSince: Date?
    /// Changes in the batch being written (counted in the backlog until written).
    private var inFlight = 0
    /// The runs of the batch being written.
    private var inFlightRunIDs: [String] = []
    /// Whether the log has said the database does not answer (said once, and once when it does).
    private var stallReported = false

    /// What the loop hands over, in its order.
    enum Item: Sendable {
        case run(TaskRun)
        case commit(ScheduleCommit, done: @Sendable (Bool) -> Void)
        case flush(CheckedContinuation<Void, Never>)
        case background(Task<Void, Never>)
    }

    /// What ``health`` is made of.
    struct Published: Sendable {
        var figures = FleetStoreFigures()
        var beatProblem: String?
        var beatSince: Date?
        var writeSince: Date?
    }

    /// The database answered (the writers' first write waits for it).
    nonisolated let join: FleetJoin

    /// The instance whose `fleet_agents` row a schedules' leader must hold (an agent's store);
    /// nil for a store connected directly (tests, tools), which leads by its holder alone.
    nonisolated let member: String?

    init(settings: FleetSettings, client: PostgresClient, logger: Logger, join: FleetJoin, member: String?) {
        self.member = member
        self.settings = settings
        self.client = client
        self.logger = logger
        self.join = join
    }

    nonisolated var joinGate: FleetJoin? { join }

    /// Refuses a read before the fleet is joined: the pool would keep it waiting for a
    /// connection (a minute, or for ever when the server accepts and never answers).
    nonisolated func requireJoined() throws {
        if let pending = join.pending {
            throw FleetStoreError(code: "unavailable", message: "the fleet's database cannot be read now: \(pending)")
        }
    }

    /// Seconds a read for a user (a listing, a run, the members) waits for the database.
    static let readDeadline = 15.0

    /// Runs a read for a user, failed past ``readDeadline``: the pool keeps a read waiting for a
    /// connection while the database is away, and a stalled server keeps a query waiting for
    /// ever. `refusingWhileDegraded`: refused at once while the fleet is not joined or its
    /// database is degraded (a listing; not a run's lookup, which the agent's own work makes too
    /// and tries again).
    nonisolated func reading<T: Sendable>(refusingWhileDegraded: Bool = true, _ body: @escaping @Sendable () async throws -> T) async throws -> T {
        try requireJoined()
        if refusingWhileDegraded, let reason = health.degraded {
            throw FleetStoreError(code: "unavailable", message: "the fleet's database cannot be read now: \(reason)")
        }
        do {
            return try await PostgresFleetStore.firstOf(Self.readDeadline, body)
        } catch let silence as PostgresFleetStore.NoAnswer {
            throw FleetStoreError(code: "unavailable", message: "the fleet's database at \(settings.displayURL) did not answer the read: \(silence)")
        }
    }

    // MARK: Handing over (any thread; cheap, never waits)

    nonisolated func enqueue(_ run: TaskRun) { handoff.yield(.run(run)) }

    nonisolated func enqueue(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
        if !handoff.yield(.commit(change, done: done)) { done(false) }
    }

    /// Returns once everything handed over before has been written (or dropped).
    nonisolated func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !handoff.yield(.flush(continuation)) { continuation.resume() }
        }
    }

    /// A task cancelled when the writer stops (a LISTEN loop).
    nonisolated func addBackgroundTask(_ task: Task<Void, Never>) {
        if !handoff.yield(.background(task)) { task.cancel() }
    }

    /// The health last published (the runs' backlog and the heartbeat's and writes' state).
    nonisolated var health: FleetStoreFigures {
        published.withLock { state in
            var copy = state.figures
            copy.degraded = join.pending ?? copy.degraded ?? state.beatProblem ?? Self.stall(state, now: Date(), limit: stallLimit, url: settings.displayURL)
            return copy
        }
    }

    /// Seconds without an answer after which the database is taken for away: two heartbeats
    /// (at least one second).
    nonisolated var stallLimit: Double { max(2 * settings.heartbeat, 1) }

    /// Why the database is taken for away when a heartbeat or a write has waited longer than `limit`.
    private static func stall(_ state: Published, now: Date, limit: Double, url: String) -> String? {
        let waits = [state.beatSince, state.writeSince].compactMap { $0 }
        guard let oldest = waits.min(), now.timeIntervalSince(oldest) > limit else { return nil }
        return "no answer from \(url) for \(Int(now.timeIntervalSince(oldest))) s"
    }

    // MARK: The actor's side

    /// The hand-over has ended (``stop()``): the LISTEN loops are cancelled, the flushes answered.
    func handoffEnded() {
        closed = true
        for task in background { task.cancel() }
        background = []
        resumeWriter()
        for waiter in flushWaiters { waiter.resume() }
        flushWaiters = []
    }

    func take(_ item: Item) {
        switch item {
        case .run(let run):
            if pendingRuns.count >= settings.backlogLimit {
                let excess = max(1, settings.backlogLimit / 10)
                pendingRuns.removeFirst(min(excess, pendingRuns.count))
                figures.dropped += excess
            }
            pendingRuns.append(run)
            resumeWriter()
            publish()
        case .commit(let change, let done):
            pendingCommits.append((change, done))
            resumeWriter()
            publish()
        case .flush(let waiter):
            if closed || (pendingRuns.isEmpty && pendingCommits.isEmpty && !writing) {
                waiter.resume()
            } else {
                flushWaiters.append(waiter)
            }
        case .background(let task):
            if closed { task.cancel() } else { background.append(task) }
        }
    }

    private func resumeWriter() {
        wake?.resume()
        wake = nil
    }

    private func publish() {
        let state = Published(figures: figuresNow, beatProblem: beatProblem, beatSince: beatSince, writeSince: writeSince)
        published.withLock { $0 = state }
    }

    private var figuresNow: FleetStoreFigures {
        var copy = figures
        copy.backlog = pendingRuns.count + pendingCommits.count + inFlight
        return copy
    }

    /// The claimed runs whose changes wait to be written (or are being written): this agent's
    /// (new runs have no claim to lose, and are many while requests pour in).
    func waitingRunIDs() -> Set<String> {
        Set(pendingRuns.lazy.filter { $0.claim != nil }.map(\.id)).union(inFlightRunIDs)
    }

    // MARK: Heartbeats

    /// One heartbeat in flight at most (the database away must not pile them up).
    func beginBeat() -> Bool {
        reportStall()
        if beating || closed { return false }
        beating = true
        beatSince = Date()
        publish()
        return true
    }

    /// `problem`: why the heartbeat was not written, nil when it was; `answered`: the database
    /// answered (another agent holds the row), not "cannot reach".
    func endBeat(problem: String?, answered: Bool = false) {
        beating = false
        beatSince = nil
        let was = beatProblem
        beatProblem = problem.map { answered ? $0 : "cannot reach \(settings.displayURL): \($0)" }
        publish()
        if was == nil, let now = beatProblem {
            logger.error("fleet: \(now)\(answered ? "" : "; local processes keep running, run changes wait (at most \(settings.backlogLimit))")")
        }
        if was != nil, beatProblem == nil { logger.notice("fleet: the database answers again") }
    }

    /// Logs when the database stops answering and when it answers again (each heartbeat).
    private func reportStall() {
        let state = Published(figures: figures, beatProblem: beatProblem, beatSince: beatSince, writeSince: writeSince)
        let problem = Self.stall(state, now: Date(), limit: stallLimit, url: settings.displayURL)
        let wasReported = stallReported
        stallReported = problem != nil
        if let problem, !wasReported {
            logger.error("fleet: \(problem); local processes keep running, run changes wait (\(figuresNow.backlog) now, at most \(settings.backlogLimit))")
        } else if problem == nil, wasReported {
            logger.notice("fleet: the database answers again")
        }
    }

    // MARK: The writer

    /// Writes what is handed over, one batch per transaction, until the hand-over ends or the
    /// task is cancelled; then resumes whoever waits for a flush.
    func writeLoop() async {
        while !Task.isCancelled, !closed {
            if pendingRuns.isEmpty, pendingCommits.isEmpty {
                await withCheckedContinuation { wake = $0 }
                continue
            }
            let runs = Array(pendingRuns.prefix(5_000))
            pendingRuns.removeFirst(runs.count)
            let commits = pendingCommits
            pendingCommits = []
            writing = true
            writeSince = Date()
            inFlight = runs.count + commits.count
            inFlightRunIDs = runs.filter { $0.claim != nil }.map(\.id)
            publish()
            do {
                let outcome = try await write(runs, commits.map(\.change))
                written(runs.count, refused: outcome.refusedRuns)
                for (commit, ok) in zip(commits, outcome.commits) { commit.done(ok) }
            } catch {
                failed(runs, error: error)
                for commit in commits { commit.done(false) }
                try? await Task.sleep(for: .seconds(1))
            }
            writing = false
            inFlightRunIDs = []
            publish()
            if pendingRuns.isEmpty, pendingCommits.isEmpty { resumeFlushWaiters() }
        }
        closed = true
        writing = false
        resumeFlushWaiters()
    }

    private func resumeFlushWaiters() {
        let waiters = flushWaiters
        flushWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func written(_ count: Int, refused: Int) {
        writeSince = nil
        inFlight = 0
        figures.written += count
        figures.refused += refused
        if let reason = figures.degraded {
            logger.notice("fleet: the database is back (\(reason) is over); \(figures.dropped) change(s) were dropped meanwhile")
            figures.degraded = nil
        }
    }

    /// The runs' changes wait for the database (bounded); fires are refused (by the caller), so
    /// that the scheduler tries them again under a leadership that holds.
    private func failed(_ runs: [TaskRun], error: any Error) {
        let reason = FleetStoreError.describe(error)
        writeSince = nil
        inFlight = 0
        let first = figures.degraded == nil
        figures.degraded = "cannot write to \(settings.displayURL): \(reason)"
        figures.writeErrors += 1
        pendingRuns.insert(contentsOf: runs, at: 0)
        if pendingRuns.count > settings.backlogLimit {
            let excess = pendingRuns.count - settings.backlogLimit
            pendingRuns.removeFirst(excess)
            figures.dropped += excess
        }
        if first {
            logger.error("fleet: cannot write to the database at \(settings.displayURL) (\(reason)); changes wait (at most \(settings.backlogLimit)) and local processes keep running")
        }
    }

    private func write(_ runs: [TaskRun], _ commits: [ScheduleCommit]) async throws -> (commits: [Bool], refusedRuns: Int) {
        let logger = logger, lease = settings.lease, member = member
        // Runs' changes alone are one statement (PostgresRunStore.write): atomic without a
        // transaction block, whose BEGIN and COMMIT would be two more round trips per batch.
        if commits.isEmpty, PostgresRunStore.statements(for: runs) <= 1 {
            return try await client.withConnection { connection in
                ([], try await PostgresRunStore.write(runs, on: connection, logger: logger))
            }
        }
        return try await client.withTransaction(logger: logger) { connection in
            var written: [Bool] = []
            for commit in commits {
                // Each fire on its own savepoint-free check: a commit whose leadership passed is skipped whole.
                written.append(try await PostgresScheduleStore.write(commit, lease: lease, member: member, on: connection, logger: logger))
            }
            let refused = try await PostgresRunStore.write(runs, on: connection, logger: logger)
            return (written, refused)
        }
    }

    // MARK: Notifications

    /// Calls `wake` on each NOTIFY of `channel`, and once each time listening (re)starts:
    /// anything may have come while not listening. A hint only: the callers poll as well, and
    /// listen again 1 s after the connection is lost.
    nonisolated func listen(on channel: String, _ wake: @escaping @Sendable () -> Void) {
        let client = client, logger = logger
        let task = Task {
            while !Task.isCancelled {
                do {
                    try await client.withConnection { connection in
                        try await connection.listen(on: channel) { notifications in
                            wake()
                            for try await _ in notifications { wake() }
                        }
                    }
                } catch {
                    if Task.isCancelled { return }
                    logger.debug("fleet: LISTEN \(channel) ended (\(error)); polling meanwhile, listening again in 1 s")
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        addBackgroundTask(task)
    }
}
#endif
