#if Fleet
import AgentCore
import AgentWork
import Foundation
import Logging
import NIOPosix
import NIOSSL
import PostgresNIO
import Synchronization

/// The fleet's PostgreSQL database: one connection pool (postgres-nio's `PostgresClient`),
/// the schema's migrations, the writer that takes what the loop hands over (``FleetWriter``,
/// an actor) and the stores of each feature, each a `let` made with the writer.
///
/// The loop never waits for the network: the stores hand changes to writers and return; the
/// writers write them in one transaction per batch. While the database cannot be reached the
/// changes wait (run changes up to ``FleetSettings/backlogLimit``, the oldest dropped beyond
/// it, counted) and are written when it is back; the store is then ``health`` degraded.
public final class PostgresFleetStore: Sendable {
    public let settings: FleetSettings
    let client: PostgresClient
    let logger: Logger
    let writer: FleetWriter
    private let clientTask: Task<Void, Never>
    /// Ends when the task that runs the client's pool has begun.
    let clientStarted: AsyncStream<Void>
    /// What the pool's attempts to connect met (its log is the only place that says).
    let poolAttempts = PoolAttempts()
    /// Whether the database has answered and the schema is migrated (the writers wait for it).
    let join: FleetJoin
    /// This store's heartbeats, told from another agent's given the same `agent_id`.
    let instance: String
    /// Whether the next heartbeat takes the row whoever wrote it last: a store connected
    /// directly (``connect(_:logger:within:)``: tests, tools); an agent's joins by taking the
    /// row (``takeTheAgentID()``), and its heartbeats write it only while it is still its own.
    let beatTakesOver = Atomic<Bool>(false)

    /// The runs and the schedules, on this database (written by ``writer``).
    public let runs: PostgresRunStore
    public let schedules: PostgresScheduleStore
    /// The events published to the fleet (a writer of its own).
    public let events: PostgresEventStore
    /// Workflow runs and their step logs (a writer of its own).
    public let workflows: PostgresWorkflowStore
    /// Shared memory (a writer of its own).
    public let memory: PostgresMemoryStore

    /// Connects (the pool opens connections as needed), applies the migrations, starts the
    /// writer. Throws when the database cannot be reached, refuses the login or the
    /// connection (too many clients), or does not answer within `deadline` seconds.
    public static func connect(_ settings: FleetSettings, logger: Logger,
                               within deadline: Double = connectDeadline) async throws -> PostgresFleetStore {
        let store = try PostgresFleetStore(settings: settings, logger: logger, member: false)
        store.beatTakesOver.store(true, ordering: .relaxed)
        do {
            try await preparing(settings, within: deadline, logger: store.clientLogger, attempts: store.poolAttempts) {
                // The pool's loop first: a lease before it runs is queued for it (postgres-nio
                // warns of it).
                for await _ in store.clientStarted {}
                try await PostgresMigrations.migrate(store.client, logger: logger)
            }
        } catch {
            await store.shutDown()
            throw error
        }
        store.join.markJoined()
        return store
    }

    /// A store that joins the fleet when its database answers (an agent's start never waits
    /// for it): see ``joinInBackground()``. Until then ``health`` says why it is degraded, and
    /// what is handed over waits, bounded as while the database is away.
    public static func open(_ settings: FleetSettings, logger: Logger) throws -> PostgresFleetStore {
        let store = try PostgresFleetStore(settings: settings, logger: logger, member: true)
        store.joinInBackground()
        return store
    }

    /// postgres-nio's own messages, at debug (``DemotedLogHandler``).
    var clientLogger: Logger { DemotedLogHandler.demoting(logger) }

    /// `member`: an agent's store, whose schedules' leadership holds only while the agent's
    /// `fleet_agents` row is this store's.
    private init(settings: FleetSettings, logger: Logger, member: Bool) throws {
        let instance = UUID().uuidString.lowercased()
        self.instance = instance
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
        let client = PostgresClient(configuration: configuration, eventLoopGroup: try Self.connectionsLoop(),
                                    backgroundLogger: DemotedLogHandler.demoting(logger, recording: poolAttempts))
        self.client = client
        let (clientStarted, started) = AsyncStream<Void>.makeStream()
        self.clientStarted = clientStarted
        let join = FleetJoin(url: settings.displayURL)
        self.join = join
        let writer = FleetWriter(settings: settings, client: client, logger: logger, join: join, member: member ? instance : nil)
        self.writer = writer
        runs = PostgresRunStore(store: writer)
        schedules = PostgresScheduleStore(store: writer)
        events = PostgresEventStore(store: writer)
        workflows = PostgresWorkflowStore(store: writer)
        memory = PostgresMemoryStore(store: writer)
        clientTask = Task {
            started.finish()
            await client.run()
        }
        writer.start()
        events.start()
        workflows.start()
        memory.start()
    }

    private static let sharedLoop = Mutex<(any EventLoop)?>(nil)

    /// The event loop of every store's connections in this process, made at the first open and
    /// never stopped, as postgres-nio's default (NIO's own group, which stops the process when
    /// the system refuses it a thread: here a refused thread fails the open instead).
    static func connectionsLoop() throws -> any EventLoop {
        try sharedLoop.withLock { shared in
            if let shared { return shared }
            switch SystemThread.handingBack("agent-fleet-loop", { handBack in MultiThreadedEventLoopGroup.withCurrentThreadAsEventLoop(handBack) }) {
            case .success(let loop):
                shared = loop
                return loop
            case .failure(let refusal):
                throw FleetStoreError(code: "unavailable", message: "fleet: cannot start: \(refusal)")
            }
        }
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

    /// ``close()`` for async callers: what is queued is written first, waited for at most
    /// `timeout` seconds (a stalled database answers no write).
    public func shutDown(within timeout: Double = 30) async {
        _ = try? await Self.firstOf(timeout) { [self] in
            await flush()
            await events.flush()
        }
        stop()
    }

    /// Returns once everything handed to the writer before has been written (or dropped).
    func flush() async { await writer.flush() }

    private func stop() {
        join.end()
        events.stop()
        workflows.stop()
        memory.stop()
        // The hand-over ends (LISTEN loops are cancelled, flushes answered); the writer's task
        // is cancelled, lest a write wait for a database that is away.
        writer.stop()
        clientTask.cancel()
    }

    /// What `status` and `/readyz` show of the fleet's database.
    public var health: FleetStoreFigures {
        var figures = writer.health
        figures.backlog += workflows.backlog
        return figures
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
