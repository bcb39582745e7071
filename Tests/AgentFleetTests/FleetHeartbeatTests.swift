#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// An agent's heartbeats against a database that stops answering one connection, and against
/// another agent given the same `agent_id`.
@Suite(.ownThreads, .serialized) struct FleetHeartbeatTests {
    /// A heartbeat whose connection's server process never answered held every later one back:
    /// the agent was shown lost, and its reads refused, for as long as it ran. It is given up at
    /// its deadline now, and a later one is written on another connection.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aHeartbeatTheDatabaseNeverAnswersIsGivenUpAndALaterOneWritten() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let database = try server.makeDatabase()
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}",
                               "agent_id": "hung-beat", "heartbeat": 0.2]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        let member = FleetMember(agentID: "hung-beat", host: "test", version: "test", started: 0, heartbeat: 0, processes: [:],
                                 running: 0, load: 0, interval: 0.2)
        func lastBeat() -> Double? {
            Double(((try? server.sql(database: database, "SELECT heartbeat FROM fleet_agents WHERE agent_id = 'hung-beat'")) ?? "").trimmingCharacters(in: .whitespacesAndNewlines))
        }
        var first: Double?
        for _ in 0..<600 where first == nil {
            store.beat(member)
            try await Task.sleep(for: .milliseconds(100))
            first = lastBeat()
        }
        let written = try #require(first, "no heartbeat was written: \(String(describing: store.health.degraded))")

        // Every server process serving the store's connections stopped: a query on one of them
        // waits for ever. New connections are served.
        let serving = try server.sql(database: database, "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()")
            .split(separator: "\n").compactMap { pid_t($0.trimmingCharacters(in: .whitespaces)) }
        try #require(!serving.isEmpty, "the store holds no connection")
        for pid in serving { kill(pid, SIGSTOP) }
        defer { for pid in serving { kill(pid, SIGCONT) } }
        let stoppedAt = Date().timeIntervalSince1970
        var later: Double?
        let deadline = Date().addingTimeInterval(120)
        while later == nil, Date() < deadline {
            store.beat(member)
            try await Task.sleep(for: .milliseconds(200))
            if let beat = lastBeat(), beat > max(written, stoppedAt) { later = beat }
        }
        #expect(later != nil, "no heartbeat was written after the connections stopped answering")
        for pid in serving { kill(pid, SIGCONT) }
        await store.shutDown(within: 10)
    }
}
#endif
