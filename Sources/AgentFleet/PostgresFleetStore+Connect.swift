#if Fleet
import AgentBase
import AgentWork
import Foundation
import Logging
import NIOSSL
import PostgresNIO
import Synchronization

/// A connection that cannot be had, said within a deadline: postgres-nio's pool waits for a
/// connection with no limit of its own — a server that accepts TCP connections and never
/// answers them (hung, stopped, overloaded) keeps a lease waiting forever — and when it gives
/// up on a server that refuses (after a minute of retries) its error names no cause.
extension PostgresFleetStore {
    /// Seconds ``connect(_:logger:within:)`` waits by default for the database's first answers.
    public static let connectDeadline: Double = 30

    /// Runs `prepare` (the first leases of a new store) for at most `seconds`; on failure or
    /// past the deadline, throws why no connection could be had, found by one connection of
    /// its own (a refusal's SQLSTATE and message, or the silence) and by what the pool's own
    /// attempts met (`attempts`).
    static func preparing(_ settings: FleetSettings, within seconds: Double, logger: Logger, attempts: PoolAttempts? = nil,
                          _ prepare: @escaping @Sendable () async throws -> Void) async throws {
        do {
            try await firstOf(seconds, prepare)
        } catch {
            let probing = min(seconds, 5)
            // The pool's attempts until the deadline were refused for too many clients: that
            // is why, whatever the probe finds a moment later (a connection freed meanwhile,
            // or a server too loaded to answer it in time).
            let refused = attempts?.lastAttemptWasRefusedForTooManyClients == true
            let cause: any Error
            switch await probe(settings, within: probing, logger: logger) {
            case nil where refused: cause = TooManyClients()
            case nil: cause = error  // a connection can be had now: the first failure says it
            case let found? where found is NoAnswer: cause = refused ? TooManyClients() : NoAnswer(seconds: seconds + probing)
            case let found?: cause = found  // the server's refusal, the network's error
            }
            throw FleetStoreError(code: "unreachable", message: "cannot prepare the fleet's database at \(settings.displayURL): \(describeFailure(cause))")
        }
    }

    /// Longest wait between two attempts to join.
    static let joinBackoffLimit: Double = 30

    /// Tries to join until the database answers: a connection of its own first (outside the
    /// pool, so that the pool makes no attempt while nothing answers), then the migrations
    /// through the pool within ``connectDeadline``; after a failure again in 1, 2, 4 … at most
    /// ``joinBackoffLimit`` seconds. The first failure is logged, once; the join is the
    /// bridge's to log (it begins the fleet's work then). Ends with the store.
    func joinInBackground() {
        let settings = settings, logger = logger, clientLogger = clientLogger, join = join, client = client, started = clientStarted
        writer.addBackgroundTask(Task {
            for await _ in started {}
            var delay = 1.0
            while !Task.isCancelled {
                let problem: String
                var answered = false
                do {
                    if let refusal = await Self.probe(settings, within: 5, logger: clientLogger) { throw refusal }
                    _ = try await Self.firstOf(Self.connectDeadline) { try await PostgresMigrations.migrate(client, logger: clientLogger) }
                    if let holder = try await Self.firstOf(Self.connectDeadline, { try await self.takeTheAgentID() }) {
                        problem = holder
                        answered = true
                    } else {
                        join.markJoined()
                        return
                    }
                } catch {
                    problem = "cannot reach \(settings.displayURL): \(Self.describeFailure(error))"
                }
                if Task.isCancelled { return }
                if join.failed(problem) {
                    let when = answered ? "when it may" : "when the database answers"
                    logger.warning("fleet: \(problem); the agent runs its local processes and joins the fleet \(when) (trying again, at most every \(Int(Self.joinBackoffLimit)) s)")
                }
                try? await Task.sleep(for: .seconds(delay))
                delay = min(delay * 2, Self.joinBackoffLimit)
            }
        })
    }

    /// `operation`'s outcome, or ``NoAnswer`` once `seconds` have passed; `operation` is then
    /// cancelled and not waited for (a lease cancelled may answer late, or never).
    static func firstOf<T: Sendable>(_ seconds: Double, _ operation: @escaping @Sendable () async throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let outcome = FirstOutcome(continuation)
            let work = Task { outcome.resume(await Result(awaiting: operation)) }
            outcome.setTimer(Task {
                try await Task.sleep(for: .seconds(seconds))
                outcome.resume(.failure(NoAnswer(seconds: seconds)))
                work.cancel()
            })
        }
    }

    /// Why a new connection fails (nil: it does not), by one attempt outside the pool.
    static func probe(_ settings: FleetSettings, within seconds: Double, logger: Logger) async -> (any Error)? {
        do {
            let tls: PostgresConnection.Configuration.TLS
            switch settings.tls {
            case .disable: tls = .disable
            case .require: tls = .require(try NIOSSLContext(configuration: .makeClientConfiguration()))
            }
            let configuration = PostgresConnection.Configuration(host: settings.host, port: settings.port, username: settings.user,
                                                                 password: settings.password, database: settings.database, tls: tls)
            let connection = try await firstOf(seconds) {
                try await PostgresConnection.connect(configuration: configuration, id: 0, logger: logger)
            }
            try? await connection.close()
            return nil
        } catch {
            return error
        }
    }

    /// A connection's failure in a line that says what to do about it.
    static func describeFailure(_ error: any Error) -> String {
        if let error = error as? PSQLError, error.serverInfo?[.sqlState] == "53300" {
            return TooManyClients().description
        }
        if error is TooManyClients { return "\(error)" }
        return FleetStoreError.describe(error)
    }

    /// The server refused the pool's connections: no connection left (SQLSTATE 53300).
    struct TooManyClients: Error, CustomStringConvertible {
        var description: String {
            "the server refused the connection: too many clients (its max_connections is reached; each agent opens up to 8 connections)"
        }
    }

    /// No answer within the deadline.
    struct NoAnswer: Error, CustomStringConvertible {
        var seconds: Double
        var description: String {
            "no answer within \(String(format: "%g", seconds)) s (the server accepts connections but does not answer them, or is overloaded)"
        }
    }

    /// Resumes its continuation once, with the first outcome (the later one is dropped), and
    /// then ends the timer.
    private final class FirstOutcome<T: Sendable>: Sendable {
        private struct State {
            var continuation: CheckedContinuation<T, any Error>?
            var timer: Task<Void, any Error>?
        }
        private let state: Mutex<State>

        init(_ continuation: CheckedContinuation<T, any Error>) { state = Mutex(State(continuation: continuation)) }

        func setTimer(_ task: Task<Void, any Error>) {
            let decided = state.withLock { state -> Bool in
                state.timer = task
                return state.continuation == nil
            }
            if decided { task.cancel() }
        }

        func resume(_ result: Result<T, any Error>) {
            let (waiting, timer) = state.withLock { state in
                defer { state.continuation = nil }
                return (state.continuation, state.timer)
            }
            waiting?.resume(with: result)
            if waiting != nil { timer?.cancel() }
        }
    }
}
#endif
