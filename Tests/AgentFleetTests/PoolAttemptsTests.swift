#if Fleet
@testable import AgentFleet
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Why a store that could not connect says so: what its pool's attempts met, even when a
/// connection is free by the time the store asks the server once more (seen at load 50: a
/// store refused for too many clients until its deadline said only "no answer within 15 s").
@Suite(.ownThreads) struct PoolAttemptsTests {
    /// A failed attempt as postgres-nio's pool logs it (PostgresClientMetrics.connectFailed):
    /// at info, the error's debug description in the metadata.
    static func failedAttempt(_ error: String) -> LogEvent {
        LogEvent(level: .info, message: "Connection creation failed", metadata: ["psql_connection_id": "1", "psql_error": .string(error)],
                 source: "PostgresNIO", file: #fileID, function: #function, line: #line)
    }

    static let refusal = #"PSQLError(code: server, serverInfo: [sqlState: 53300, localizedSeverity: FATAL, message: sorry, too many clients already])"#

    @Test func theLastAttemptDecidesAndASuccessForgetsTheRefusal() {
        let attempts = PoolAttempts()
        #expect(!attempts.lastAttemptWasRefusedForTooManyClients)
        attempts.record(Self.failedAttempt(Self.refusal))
        #expect(attempts.lastAttemptWasRefusedForTooManyClients)
        attempts.record(Self.failedAttempt("PSQLError(code: connectionError, underlying: connectTimeout)"))
        #expect(!attempts.lastAttemptWasRefusedForTooManyClients, "a later timeout is what the pool met last")
        attempts.record(Self.failedAttempt(Self.refusal))
        attempts.record(LogEvent(level: .debug, message: "Connection established", metadata: ["psql_connection_id": "2"],
                                 source: "PostgresNIO", file: #fileID, function: #function, line: #line))
        #expect(!attempts.lastAttemptWasRefusedForTooManyClients)
    }

    /// The logger the pool is given passes its info lines to the record, though the agent's
    /// level is warning (a logger drops what is below its handler's level before the handler).
    @Test func theDemotedLoggerRecordsAtAnyLevelOfTheAgent() {
        let attempts = PoolAttempts()
        var agent = Logger(label: "agent") { _ in SwiftLogNoOpLogHandler() }
        agent.logLevel = .warning
        let pool = DemotedLogHandler.demoting(agent, recording: attempts)
        pool.info("Connection creation failed", metadata: ["psql_error": .string(Self.refusal)])
        #expect(attempts.lastAttemptWasRefusedForTooManyClients)
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aStoreRefusedUntilItsDeadlineSaysTooManyClientsThoughAConnectionIsFreeWhenItProbes() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}", "agent_id": "attempts"]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let attempts = PoolAttempts()
        attempts.record(Self.failedAttempt(Self.refusal))
        // The first leases failed at the deadline; the server has connections free now (the
        // probe connects), as when other stores gave up meanwhile.
        let refused = await Self.failure(settings, attempts)
        #expect(refused.contains("too many clients") && refused.contains("max_connections"), "\(refused)")
        // Without a refusal from the pool, the same silence is said as a silence.
        let silent = await Self.failure(settings, PoolAttempts())
        #expect(silent.contains("no answer within 30 s"), "\(silent)")
    }

    /// What ``PostgresFleetStore/preparing(_:within:logger:attempts:_:)`` says when the first
    /// leases found no answer within 30 s.
    static func failure(_ settings: FleetSettings, _ attempts: PoolAttempts) async -> String {
        do {
            try await PostgresFleetStore.preparing(settings, within: 30, logger: Logger(label: "test"), attempts: attempts) {
                throw PostgresFleetStore.NoAnswer(seconds: 30)
            }
            return "(no failure)"
        } catch {
            return "\(error)"
        }
    }
}
#endif
