#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Shared memory on the store a fleet shares: agents' compare-and-set writes at the same
/// time lose nothing (what every store does alone is StoreContract's).
@Suite(.ownThreads) struct FleetMemoryCompareAndSetTests {
    /// Two agents' stores on one database, each adding 1 to a counter 40 times by
    /// compare-and-set (reading, then writing the version read; again on a conflict).
    @Test func agentsIncrementingOneKeyByCompareAndSetAtOnceLoseNoIncrement() async throws {
        if let reason = PostgresTestServer.unavailableReason { try Test.cancel("no PostgreSQL server for the tests: \(reason)") }
        let database = try PostgresTestServer.require().makeDatabase()
        let a = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "host-a"), logger: Logger(label: "a"))
        let b = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "host-b"), logger: Logger(label: "b"))
        let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
            for store in [a, b] {
                group.addTask {
                    var conflicts = 0
                    for _ in 0..<40 {
                        while true {
                            let current = try store.memory.get("counter", scope: .agent)
                            let next = (current?.value.numberValue?.intValue ?? 0) + 1
                            let result = await StoreContract.write(store.memory, "counter", .put(.number(JSONNumber(next))), expect: current?.version ?? 0)
                            if StoreContract.conflictVersion(result) != nil {
                                conflicts += 1
                                continue
                            }
                            _ = try result.get()
                            break
                        }
                    }
                    return conflicts
                }
            }
            var total = 0
            for try await count in group { total += count }
            return total
        }
        let final = try #require(try b.memory.get("counter", scope: .agent))
        #expect(final.value == 80, "each agent's 40 increments, none lost (\(conflicts) conflicts retried)")
        #expect(final.version == 80)
        await a.shutDown()
        await b.shutDown()
    }

    /// Keys left under a run that is gone (written by an earlier version, which deleted no
    /// run's keys) are no run's: a write expecting their version is refused `not_found` as any
    /// other put there, and the next retention that deletes a run takes them.
    @Test func aRunsKeysLeftBehindAreNotWrittenAndGoAtTheNextRetention() async throws {
        if let reason = PostgresTestServer.unavailableReason { try Test.cancel("no PostgreSQL server for the tests: \(reason)") }
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "host-a"), logger: Logger(label: "a"))
        _ = try server.sql(database: database, "INSERT INTO memory (scope, key, value, version, updated) VALUES ('run:gone', 'k', '1', 1, 0)")
        let refused = await StoreContract.write(store.memory, "k", .put(2), expect: 1, scope: .workflowRun("gone"))
        guard case .failure(let error) = refused else { Issue.record("a put to a gone run's key was taken: \(refused)"); return }
        #expect(error.code == .notFound && error.pointer == "/run", "\(error)")
        #expect(StoreContract.conflictVersion(await StoreContract.write(store.memory, "k", .put(2), scope: .workflowRun("gone"))) == nil)

        var finished = StoreContract.workflowRun("old", status: .succeeded)
        finished.endedAt = 1
        #expect(await StoreContract.commit(store.workflows, WorkflowCommit(runs: [finished])) == .written)
        #expect(try await store.workflows.prune(endedBefore: 2, keeping: nil) == 1)
        #expect(try server.sql(database: database, "SELECT count(*) FROM memory").trimmingCharacters(in: .whitespacesAndNewlines) == "0")
        await store.shutDown()
    }
}
#endif
