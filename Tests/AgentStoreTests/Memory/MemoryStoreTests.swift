@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// Shared memory in a real SQLite store: written through the store's writer, read back,
/// versions and compare-and-set, scopes, paging, bounds.
@Suite(.ownThreads) struct MemoryStoreTests {
    static func open(_ folder: String) throws -> (AgentStore, SQLiteMemoryStore) {
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        return (store, try SQLiteMemoryStore(store: store))
    }

    @Test func everyWriteIncrementsTheVersionAndSurvivesAReopen() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        let first = try await memory.put("customer/42", value: ["name": "Ada", "tier": 2], scope: .agent)
        #expect(first.version == 1)
        let second = try await memory.put("customer/42", value: ["name": "Ada", "tier": 3], scope: .agent)
        #expect(second.version == 2)
        #expect(try memory.get("customer/42", scope: .agent)?.value == ["name": "Ada", "tier": 3])
        #expect(try memory.get("nope", scope: .agent) == nil)
        store.close()

        let (again, reopened) = try Self.open(folder)
        defer { again.close() }
        let entry = try #require(try reopened.get("customer/42", scope: .agent))
        #expect(entry.version == 2)
        #expect(entry.value == ["name": "Ada", "tier": 3])
        #expect(try await reopened.put("customer/42", value: nil, scope: .agent).version == 3)
    }

    @Test func aWriteExpectingAnotherVersionIsRefusedAndChangesNothing() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        #expect(try await memory.put("lock", value: "a", scope: .agent, expectedVersion: 0).version == 1)
        await #expect(throws: MemoryError.self) { try await memory.put("lock", value: "b", scope: .agent, expectedVersion: 0) }
        do {
            _ = try await memory.put("lock", value: "c", scope: .agent, expectedVersion: 5)
            Issue.record("a stale version was accepted")
        } catch {
            #expect(error.code == .conflict)
            #expect(error.currentVersion == 1)
            #expect(error.description.contains("version 1"))
        }
        #expect(try memory.get("lock", scope: .agent)?.value == "a")
        #expect(try await memory.put("lock", value: "d", scope: .agent, expectedVersion: 1).version == 2)
        await #expect(throws: MemoryError.self) { try await memory.delete("lock", scope: .agent, expectedVersion: 1) }
        let removed = try await memory.delete("lock", scope: .agent, expectedVersion: 2)
        #expect(removed?.value == "d")
        #expect(try memory.get("lock", scope: .agent) == nil)
        #expect(try await memory.delete("lock", scope: .agent) == nil, "deleting a missing key is no error")
    }

    /// Compare-and-set from many writers at once: no increment is lost.
    @Test func concurrentCompareAndSetIncrementsLoseNothing() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    var done = 0
                    while done < 25 {
                        let current = try? memory.get("counter", scope: .agent)
                        let count = current?.value.numberValue?.intValue ?? 0
                        do throws(MemoryError) {
                            _ = try await memory.put("counter", value: .number(JSONNumber(count + 1)), scope: .agent, expectedVersion: current?.version ?? 0)
                            done += 1
                        } catch {
                            #expect(error.code == .conflict)
                        }
                    }
                }
            }
        }
        let entry = try #require(try memory.get("counter", scope: .agent))
        #expect(entry.value == 200)
        #expect(entry.version == 200)
    }

    @Test func aWorkflowRunsScopeIsItsOwnAndGoesAsAWhole() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        _ = try await memory.put("step", value: "agent", scope: .agent)
        _ = try await memory.put("step", value: "one", scope: .workflowRun("r1"))
        _ = try await memory.put("other", value: 1, scope: .workflowRun("r1"))
        _ = try await memory.put("step", value: "two", scope: .workflowRun("r2"))
        #expect(try memory.get("step", scope: .workflowRun("r1"))?.value == "one")
        #expect(try memory.get("step", scope: .workflowRun("r2"))?.value == "two")
        #expect(try memory.get("step", scope: .agent)?.value == "agent")
        let gone = await withCheckedContinuation { continuation in
            memory.commit(MemoryWrite(scope: .workflowRun("r1"), key: "", operation: .deleteScope)) { continuation.resume(returning: $0) }
        }
        guard case .success = gone else { Issue.record("deleting the run's scope failed: \(gone)"); return }
        #expect(try memory.list(scope: .workflowRun("r1"), prefix: "", after: nil, limit: 100).entries.isEmpty)
        #expect(try memory.get("step", scope: .workflowRun("r2"))?.value == "two")
        #expect(try memory.get("step", scope: .agent)?.value == "agent")
    }

    @Test func listTakesKeysByPrefixInOrderAndPages() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        for key in ["a%b", "a_c", "ab", "order/3", "order/1", "order/2", "orders", "p"] {
            _ = try await memory.put(key, value: .string(key), scope: .agent)
        }
        #expect(try memory.list(scope: .agent, prefix: "order/", after: nil, limit: 100).entries.map(\.key) == ["order/1", "order/2", "order/3"])
        #expect(try memory.list(scope: .agent, prefix: "a%", after: nil, limit: 100).entries.map(\.key) == ["a%b"], "% is no wildcard")
        #expect(try memory.list(scope: .agent, prefix: "a_", after: nil, limit: 100).entries.map(\.key) == ["a_c"], "_ is no wildcard")
        let first = try memory.list(scope: .agent, prefix: "", after: nil, limit: 3)
        #expect(first.entries.map(\.key) == ["a%b", "a_c", "ab"])
        #expect(first.next == "ab")
        let second = try memory.list(scope: .agent, prefix: "", after: first.next, limit: 3)
        #expect(second.entries.map(\.key) == ["order/1", "order/2", "order/3"])
        let last = try memory.list(scope: .agent, prefix: "", after: second.next, limit: 3)
        #expect(last.entries.map(\.key) == ["orders", "p"])
        #expect(last.next == nil)
    }

    @Test func keysAndValuesOutOfBoundsAreRefusedWithTheLimitNamed() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        let big = JSONValue.string(String(repeating: "x", count: MemoryLimits.valueBytes))
        do {
            _ = try await memory.put("big", value: big, scope: .agent)
            Issue.record("a value over the limit was accepted")
        } catch {
            #expect(error.code == .tooLarge)
            #expect(error.message.contains("at most \(MemoryLimits.valueBytes) bytes"))
            #expect(error.key == "big")
        }
        let justFits = JSONValue.string(String(repeating: "x", count: MemoryLimits.valueBytes - 2))
        #expect(try await memory.put("fits", value: justFits, scope: .agent).version == 1)
        for key in ["", String(repeating: "k", count: MemoryLimits.keyBytes + 1), "line\nbreak"] {
            await #expect(throws: MemoryError.self) { try await memory.put(key, value: 1, scope: .agent) }
            #expect(throws: MemoryError.self) { try memory.get(key, scope: .agent) }
        }
        #expect(try await memory.put(String(repeating: "k", count: MemoryLimits.keyBytes), value: 1, scope: .agent).version == 1)
        #expect(try memory.get("big", scope: .agent) == nil)
    }
}
