#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Shared memory on every store: versions, compare-and-set and its refusals, lists in byte
/// order by page and scope; and, on the store a fleet shares, agents' compare-and-set writes
/// at the same time losing nothing.
extension StoreConformanceTests {
    static func write(_ memory: any MemoryStore, _ key: String, _ operation: MemoryWrite.Operation, expect version: Int? = nil,
                      scope: MemoryScope = .agent) async -> Result<MemoryEntry?, MemoryError> {
        await withCheckedContinuation { continuation in
            memory.commit(MemoryWrite(scope: scope, key: key, operation: operation, expectedVersion: version)) { continuation.resume(returning: $0) }
        }
    }

    static func conflictVersion(_ result: Result<MemoryEntry?, MemoryError>) -> Int? {
        guard case .failure(let error) = result, error.code == .conflict else { return nil }
        return error.currentVersion
    }

    @Test(arguments: StoreKind.allCases)
    func sharedMemoryCountsVersionsAndRefusesAWriteThatExpectedAnother(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let memory = stores.memory
        #expect(try await Self.write(memory, "k", .put(["n": 1])).get()?.version == 1)
        #expect(try await Self.write(memory, "k", .put(["n": 2]), expect: 1).get()?.version == 2)
        #expect(Self.conflictVersion(await Self.write(memory, "k", .put(["n": 3]), expect: 1)) == 2, "a stale version is refused")
        #expect(Self.conflictVersion(await Self.write(memory, "k", .put(["n": 3]), expect: 0)) == 2, "0: only if the key does not exist")
        #expect(Self.conflictVersion(await Self.write(memory, "absent", .put(1), expect: 3)) == 0, "a version of a key that does not exist")
        #expect(try await Self.write(memory, "new", .put(true), expect: 0).get()?.version == 1)
        #expect(try await Self.write(memory, "k", .put(["n": 3])).get()?.version == 3, "no version expected: any")

        let stored = try #require(try memory.get("k", scope: .agent))
        #expect(stored.value == ["n": 3] && stored.version == 3)
        #expect(try memory.get("k", scope: .workflowRun("r1")) == nil, "a run's scope is its own")
        #expect(try memory.get("absent", scope: .agent) == nil)

        #expect(Self.conflictVersion(await Self.write(memory, "k", .delete, expect: 2)) == 3)
        #expect(Self.conflictVersion(await Self.write(memory, "k", .delete, expect: 0)) == 3)
        #expect(try await Self.write(memory, "k", .delete, expect: 3).get()?.value == ["n": 3], "a delete answers the entry removed")
        #expect(try await Self.write(memory, "k", .delete).get() == nil, "nothing to delete")
        #expect(try await Self.write(memory, "k", .delete, expect: 0).get() == nil, "0: and there is none")
        #expect(Self.conflictVersion(await Self.write(memory, "k", .delete, expect: 1)) == 0)
        #expect(try memory.get("k", scope: .agent) == nil)
        #expect(try await Self.write(memory, "k", .put("again")).get()?.version == 1, "a key written again after its delete starts over")
        await stores.close()
    }

    @Test(arguments: StoreKind.allCases)
    func sharedMemoryListsKeysInByteOrderByPageAndScope(_ kind: StoreKind) async throws {
        let stores = try await StoresUnderTest.open(kind)
        let memory = stores.memory
        for key in ["b", "a_b", "B", "ab", "a%", "a"] { _ = try await Self.write(memory, key, .put(.string(key))).get() }
        _ = try await Self.write(memory, "a", .put("the run's"), scope: .workflowRun("r1")).get()

        #expect(try memory.list(scope: .agent, prefix: "", after: nil, limit: 100).entries.map(\.key) == ["B", "a", "a%", "a_b", "ab", "b"],
                "byte order, whatever the server's locale")
        #expect(try memory.list(scope: .agent, prefix: "a", after: nil, limit: 100).entries.map(\.key) == ["a", "a%", "a_b", "ab"],
                "`%` and `_` are characters, not patterns")
        let first = try memory.list(scope: .agent, prefix: "a", after: nil, limit: 2)
        #expect(first.entries.map(\.key) == ["a", "a%"] && first.next == "a%")
        let second = try memory.list(scope: .agent, prefix: "a", after: first.next, limit: 2)
        #expect(second.entries.map(\.key) == ["a_b", "ab"])
        #expect(try memory.list(scope: .agent, prefix: "a", after: second.next ?? "ab", limit: 2).entries.isEmpty)
        #expect(try memory.list(scope: .workflowRun("r1"), prefix: "", after: nil, limit: 100).entries.map(\.value) == ["the run's"])

        _ = try await Self.write(memory, "", .deleteScope, scope: .workflowRun("r1")).get()
        #expect(try memory.list(scope: .workflowRun("r1"), prefix: "", after: nil, limit: 100).entries.isEmpty, "a gone run's keys go with it")
        #expect(try memory.list(scope: .agent, prefix: "", after: nil, limit: 100).entries.count == 6, "the agent's stay")
        await stores.close()
    }

    /// Two agents' stores on one database, each adding 1 to a counter 40 times by
    /// compare-and-set (reading, then writing the version read; again on a conflict).
    @Test func agentsIncrementingOneKeyByCompareAndSetAtOnceLoseNoIncrement() async throws {
        if let reason = PostgresTestServer.unavailableReason { try Test.cancel("no PostgreSQL server for the tests: \(reason)") }
        let database = try PostgresTestServer.require().makeDatabase()
        let a = try await PostgresFleetStore.connect(try StoresUnderTest.fleetSettings(database: database, agent: "host-a"), logger: Logger(label: "a"))
        let b = try await PostgresFleetStore.connect(try StoresUnderTest.fleetSettings(database: database, agent: "host-b"), logger: Logger(label: "b"))
        let conflicts = try await withThrowingTaskGroup(of: Int.self) { group in
            for store in [a, b] {
                group.addTask {
                    var conflicts = 0
                    for _ in 0..<40 {
                        while true {
                            let current = try store.memory.get("counter", scope: .agent)
                            let next = (current?.value.numberValue?.intValue ?? 0) + 1
                            let result = await Self.write(store.memory, "counter", .put(.number(JSONNumber(next))), expect: current?.version ?? 0)
                            if Self.conflictVersion(result) != nil {
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
}
#endif
