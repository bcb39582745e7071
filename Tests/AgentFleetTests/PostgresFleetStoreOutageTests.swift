#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The fleet's store while its database is away (issue 26 item 5): what is handed over waits,
/// bounded by `backlog_limit`, the rest dropped and counted; the store says it is degraded; what
/// waited is written once the database is back.
@Suite(.ownThreads, .serialized) struct PostgresFleetStoreOutageTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func runChangesWaitBoundedAndCountedWhileTheDatabaseIsAwayAndAreWrittenWhenItIsBack() async throws {
        // A server of its own: this test stops it.
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let json: JSONValue = ["postgres": .string(server.url(database: try server.makeDatabase())), "password": "${env:PGPASSWORD}",
                               "agent_id": "outage", "heartbeat": 0.2, "backlog_limit": 20]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        #expect(store.health.degraded == nil)

        try server.pause()
        // A first change: the writer takes it and waits for the database.
        store.runs.record(StoreContract.run("first"))
        let deadline = Date().addingTimeInterval(30)
        while store.health.degraded == nil, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(store.health.degraded != nil, "the store says the database is away")
        for index in 0..<50 { store.runs.record(StoreContract.run("r\(index)")) }
        // The writer (an actor) takes what was handed over a moment later: health says so then.
        let taken = Date().addingTimeInterval(30)
        while store.health.backlog + store.health.dropped < 51, Date() < taken { try await Task.sleep(for: .milliseconds(20)) }
        let away = store.health
        #expect(away.dropped > 0, "beyond the limit the oldest waiting changes are dropped, counted")
        #expect(away.backlog + away.dropped == 51, "every change either waits or is counted dropped: \(away)")
        #expect(away.backlog <= 20 + 1, "bounded: at most the limit waits, besides the batch being written: \(away)")

        try server.resume()
        let caughtUp = Date().addingTimeInterval(60)
        while store.health.backlog > 0 || store.health.degraded != nil, Date() < caughtUp { try await Task.sleep(for: .milliseconds(100)) }
        let back = store.health
        #expect(back.degraded == nil, "\(back)")
        #expect(back.backlog == 0)
        let stored = try await store.runs.list(RunFilter(limit: 100)).map(\.run.id)
        #expect(stored.count == 51 - back.dropped, "what waited is written, what was dropped is not: \(stored)")
        #expect(stored.contains("r49"), "the newest changes are kept")
        await store.shutDown()
    }
}
#endif
