#if Fleet
import AgentWork
import Foundation
import Logging
import NIOSSL
import PostgresNIO

/// The fleet's PostgreSQL database: one connection pool (postgres-nio's `PostgresClient`),
/// the schema's migrations, and the writer that takes what the loop hands over.
///
/// The loop never waits for the network: ``enqueue(_:)`` and ``enqueue(_:done:)`` append to
/// a list under a lock and return; a writer task writes the list in one transaction per
/// batch. While the database cannot be reached the list waits (run changes up to
/// ``FleetSettings/backlogLimit``, the oldest dropped beyond it, counted) and is written when
/// it is back; the store is then ``health`` degraded.
public final class PostgresFleetStore: @unchecked Sendable {
    public let settings: FleetSettings
    let client: PostgresClient
    let logger: Logger
    private var clientTask: Task<Void, Never>?
    /// Ends when the task that runs the client's pool has begun.
    private let clientStarted: AsyncStream<Void>
    private var writerTask: Task<Void, Never>?

    private let lock = NSLock()
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
    /// Whether the log has said the database does not answer (said once, and once when it does).
    private var stallReported = false

    /// The runs and the schedules, on this database (set by the initializer).
    public private(set) var runs: PostgresRunStore!
    public private(set) var schedules: PostgresScheduleStore!
    /// The events published to the fleet (a writer of its own).
    public private(set) var events: PostgresEventStore!
    /// Workflow runs and their step logs (a writer of its own).
    public private(set) var workflows: PostgresWorkflowStore!
    /// Shared memory (a writer of its own).
    public private(set) var memory: PostgresMemoryStore!

    /// Connects (the pool opens connections as needed), applies the migrations, starts the
    /// writer. Throws when the database cannot be reached, refuses the login or the
    /// connection (too many clients), or does not answer within `deadline` seconds.
    public static func connect(_ settings: FleetSettings, logger: Logger,
                               within deadline: Double = connectDeadline) async throws -> PostgresFleetStore {
        let store = try PostgresFleetStore(settings: settings, logger: logger)
        do {
            try await preparing(settings, within: deadline, logger: logger) {
                // The pool's loop first: a lease before it runs is queued for it (postgres-nio
                // warns of it).
                for await _ in store.clientStarted {}
                try await PostgresMigrations.migrate(store.client, logger: logger)
            }
        } catch {
            await store.shutDown()
            throw error
        }
        return store
    }

    private init(settings: FleetSettings, logger: Logger) throws {
        self.settings = settings
        self.logger = logger
        let tls: PostgresClient.Configuration.TLS
        switch settings.tls {
        case .disable: tls = .disable
        case .require: tls = .require(.makeClientConfiguration())
        }
        var configuration = PostgresClient.Configuration(host: settings.host, port: settings.port, username: settings.user,
                                                         password: settings.password, database: settings.database, tls: tls)
        configuration.options.maximumConnections = 8
        configuration.options.connectTimeout = .seconds(5)
        configuration.options.keepAliveBehavior = .init(frequency: .seconds(10))
        // An agent cut off mid-transaction (a network partition) must not keep its rows locked
        // past its lease: claims skip locked rows, so its runs would stay out of every rescuer's
        // reach for as long as the server keeps the dead connection (TCP keepalive: hours). The
        // server ends such a session once it has been idle in its transaction for a lease.
        configuration.options.additionalStartupParameters = [
            ("idle_in_transaction_session_timeout", String(Int(min(settings.lease, 3600) * 1000))),
        ]
        client = PostgresClient(configuration: configuration, backgroundLogger: logger)
        let (clientStarted, started) = AsyncStream<Void>.makeStream()
        self.clientStarted = clientStarted
        runs = PostgresRunStore(store: self)
        schedules = PostgresScheduleStore(store: self)
        events = PostgresEventStore(store: self)
        events.start()
        workflows = PostgresWorkflowStore(store: self)
        workflows.start()
        memory = PostgresMemoryStore(store: self)
        memory.start()
        let client = client
        clientTask = Task {
            started.finish()
            await client.run()
        }
        writerTask = Task { [weak self] in await self?.writeLoop() }
    }

    /// Stops the writer (what is queued is written first, for at most 5 seconds) and
    /// closes the connections. Blocks: for synchronous callers off the cooperative pool (the
    /// agent's end); async code uses ``shutDown()``.
    public func close() { close(within: 5) }

    /// ``close()`` waiting at most `timeout` seconds for what is queued.
    public func close(within timeout: Double) {
        let finished = DispatchSemaphore(value: 0)
        Task {
            await self.flush()
            await self.events.flush()
            finished.signal()
        }
        _ = finished.wait(timeout: .now() + timeout)
        stop()
    }

    /// ``close()`` for async callers: what is queued is written first.
    public func shutDown() async {
        await flush()
        await events.flush()
        stop()
    }

    func addBackgroundTask(_ task: Task<Void, Never>) {
        lock.withLock { background.append(task) }
    }

    /// One heartbeat in flight at most (the database away must not pile them up).
    func beginBeat() -> Bool {
        reportStall()
        return lock.withLock {
            if beating || closed { return false }
            beating = true
            beatSince = Date()
            return true
        }
    }

    /// Seconds without an answer after which the database is taken for away: two heartbeats
    /// (at least one second).
    var stallLimit: Double { max(2 * settings.heartbeat, 1) }

    /// Why the database is taken for away when a heartbeat or a write has waited longer than
    /// ``stallLimit`` (lock held).
    private func stall(now: Date) -> String? {
        let waits = [beatSince, writeSince].compactMap { $0 }
        guard let oldest = waits.min(), now.timeIntervalSince(oldest) > stallLimit else { return nil }
        return "no answer from \(settings.displayURL) for \(Int(now.timeIntervalSince(oldest))) s"
    }

    /// Logs when the database stops answering and when it answers again (each heartbeat).
    private func reportStall() {
        let (problem, backlog, wasReported) = lock.withLock { () -> (String?, Int, Bool) in
            let problem = stall(now: Date())
            let was = stallReported
            stallReported = problem != nil
            return (problem, pendingRuns.count + pendingCommits.count + inFlight, was)
        }
        if let problem, !wasReported {
            logger.error("fleet: \(problem); local processes keep running, run changes wait (\(backlog) now, at most \(settings.backlogLimit))")
        } else if problem == nil, wasReported {
            logger.notice("fleet: the database answers again")
        }
    }

    /// `problem`: why the heartbeat was not written, nil when it was.
    func endBeat(problem: String?) {
        let (was, now) = lock.withLock { () -> (String?, String?) in
            beating = false
            beatSince = nil
            let was = beatProblem
            beatProblem = problem.map { "cannot reach \(settings.displayURL): \($0)" }
            return (was, beatProblem)
        }
        if was == nil, let now { logger.error("fleet: \(now); local processes keep running, run changes wait (at most \(settings.backlogLimit))") }
        if was != nil, now == nil { logger.notice("fleet: the database answers again") }
    }

    private func stop() {
        events.stop()
        workflows.stop()
        memory.stop()
        for task in lock.withLock({ background }) { task.cancel() }
        lock.withLock {
            closed = true
            wake?.resume()
            wake = nil
        }
        writerTask?.cancel()
        clientTask?.cancel()
    }

    // MARK: Handing writes over (any thread; cheap)

    func enqueue(_ run: TaskRun) {
        lock.withLock {
            if pendingRuns.count >= settings.backlogLimit {
                let excess = max(1, settings.backlogLimit / 10)
                pendingRuns.removeFirst(min(excess, pendingRuns.count))
                figures.dropped += excess
            }
            pendingRuns.append(run)
            wake?.resume()
            wake = nil
        }
    }

    func enqueue(_ change: ScheduleCommit, done: @escaping @Sendable (Bool) -> Void) {
        lock.withLock {
            pendingCommits.append((change, done))
            wake?.resume()
            wake = nil
        }
    }

    /// Returns once everything handed over before has been written (or dropped).
    func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if pendingRuns.isEmpty, pendingCommits.isEmpty, !writing || closed {
                lock.unlock()
                continuation.resume()
                return
            }
            flushWaiters.append(continuation)
            lock.unlock()
        }
    }

    /// What `status` and `/readyz` show of the fleet's database.
    public var health: FleetStoreFigures {
        let workflowBacklog = workflows.backlog
        return lock.withLock {
            var copy = figures
            copy.backlog = pendingRuns.count + pendingCommits.count + inFlight + workflowBacklog
            copy.degraded = copy.degraded ?? beatProblem ?? stall(now: Date())
            return copy
        }
    }

    // MARK: The writer

    private func writeLoop() async {
        while !Task.isCancelled {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if closed || !pendingRuns.isEmpty || !pendingCommits.isEmpty {
                    lock.unlock()
                    continuation.resume()
                } else {
                    wake = continuation
                    lock.unlock()
                }
            }
            let (runs, commits, stop) = lock.withLock { () -> ([TaskRun], [(change: ScheduleCommit, done: @Sendable (Bool) -> Void)], Bool) in
                let runs = Array(pendingRuns.prefix(5_000))
                pendingRuns.removeFirst(runs.count)
                let commits = pendingCommits
                pendingCommits = []
                writing = true
                writeSince = Date()
                inFlight = runs.count + commits.count
                return (runs, commits, closed && runs.isEmpty && commits.isEmpty)
            }
            if stop { break }
            do {
                let outcome = try await write(runs, commits.map(\.change))
                lock.withLock {
                    writeSince = nil
                    inFlight = 0
                    figures.written += runs.count
                    figures.refused += outcome.refusedRuns
                    if let reason = figures.degraded {
                        logger.notice("fleet: the database is back (\(reason) is over); \(figures.dropped) change(s) were dropped meanwhile")
                        figures.degraded = nil
                    }
                }
                for (commit, written) in zip(commits, outcome.commits) { commit.done(written) }
            } catch {
                let reason = FleetStoreError.describe(error)
                let first = lock.withLock { () -> Bool in
                    writeSince = nil
                    inFlight = 0
                    let first = figures.degraded == nil
                    figures.degraded = "cannot write to \(settings.displayURL): \(reason)"
                    figures.writeErrors += 1
                    // The runs' changes wait for the database (bounded); fires are refused, so
                    // that the scheduler tries them again under a leadership that holds.
                    pendingRuns.insert(contentsOf: runs, at: 0)
                    if pendingRuns.count > settings.backlogLimit {
                        let excess = pendingRuns.count - settings.backlogLimit
                        pendingRuns.removeFirst(excess)
                        figures.dropped += excess
                    }
                    return first
                }
                if first { logger.error("fleet: cannot write to the database at \(settings.displayURL) (\(reason)); changes wait (at most \(settings.backlogLimit)) and local processes keep running") }
                for commit in commits { commit.done(false) }
                try? await Task.sleep(for: .seconds(1))
            }
            let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                writing = false
                guard (pendingRuns.isEmpty && pendingCommits.isEmpty) || closed else { return [] }
                defer { flushWaiters = [] }
                return flushWaiters
            }
            for waiter in waiters { waiter.resume() }
        }
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            writing = false
            defer { flushWaiters = [] }
            return flushWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func write(_ runs: [TaskRun], _ commits: [ScheduleCommit]) async throws -> (commits: [Bool], refusedRuns: Int) {
        // Runs' changes alone are one statement (PostgresRunStore.write): atomic without a
        // transaction block, whose BEGIN and COMMIT would be two more round trips per batch.
        if commits.isEmpty, PostgresRunStore.statements(for: runs) <= 1 {
            return try await client.withConnection { connection in
                ([], try await PostgresRunStore.write(runs, on: connection, logger: self.logger))
            }
        }
        return try await client.withTransaction(logger: logger) { connection in
            var written: [Bool] = []
            for commit in commits {
                // Each fire on its own savepoint-free check: a commit whose leadership passed is skipped whole.
                written.append(try await PostgresScheduleStore.write(commit, lease: settings.lease, on: connection, logger: logger))
            }
            let refused = try await PostgresRunStore.write(runs, on: connection, logger: logger)
            return (written, refused)
        }
    }
}

/// What the fleet's store has done and how it is.
public struct FleetStoreFigures: Sendable, Equatable {
    /// Run changes written since the start.
    public var written = 0
    /// Run changes dropped because the backlog was full while the database was away.
    public var dropped = 0
    /// Run changes refused because their claim had passed to another agent.
    public var refused = 0
    public var writeErrors = 0
    /// Changes waiting to be written.
    public var backlog = 0
    /// Why the database is not being written, if it is not.
    public var degraded: String?
}

/// A failure of the fleet's database, with a code for the commands.
public struct FleetStoreError: Error, CustomStringConvertible {
    public var code: String
    public var message: String
    public var description: String { message }

    /// What went wrong, in a line: the server's message, else the connection's failure
    /// (postgres-nio's own description hides both, lest a query's values leak into logs).
    static func describe(_ error: any Error) -> String {
        guard let error = error as? PSQLError else { return String(describing: error) }
        if let message = error.serverInfo?[.message] { return message }
        if let underlying = error.underlying { return String(describing: underlying) }
        return String(describing: error.code)
    }
}
#endif
