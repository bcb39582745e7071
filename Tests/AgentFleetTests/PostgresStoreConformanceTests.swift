#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The store contract (AgentStoreConformance) on the fleet's PostgreSQL database, a real server
/// started by the tests: the same checks AgentStoreTests runs on SQLite, and those of the
/// shared workflow store, which only a fleet's store is.
///
/// Serialized: a full run under a CPU hog here once saw every PostgreSQL case of this suite —
/// 23 stores connecting at the same moment, each with a pool of up to 8 connections, while
/// other tests' agents held theirs — wait forever for their first connection (the cause was
/// not found; the other in-process stores of that run connected). One case at a time takes
/// about as long as the slowest did together.
@Suite(.ownThreads, .serialized) struct PostgresStoreConformanceTests {
    static let open: StoreFactory = {
        if let reason = PostgresTestServer.unavailableReason { try Test.cancel("no PostgreSQL server for the tests: \(reason)") }
        let store = try await PostgresFleetStore.connect(try fleetSettings(database: try PostgresTestServer.require().makeDatabase()),
                                                         logger: Logger(label: "test"))
        return StoresUnderTest(runs: store.runs, schedules: store.schedules, workflows: store.workflows, memory: store.memory) {
            await store.shutDown()
        }
    }

    /// Fleet settings for a database of the tests' server, as an agent's settings give them.
    static func fleetSettings(database: String, agent: String = "test-agent") throws -> FleetSettings {
        let server = try PostgresTestServer.require()
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}", "agent_id": .string(agent)]
        return try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
    }

    @Test(arguments: StoreContract.common + StoreContract.sharedWorkflows)
    func storeContract(_ check: StoreCheck) async throws { try await check.run(Self.open) }
}
#endif
