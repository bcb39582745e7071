@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Synchronization
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

    /// A workflow run's commit and a write to its keys that the writer takes in one batch: the
    /// run is written first. The test holds the database, lets the writer take a first write
    /// (it then waits for the database), and hands both over meanwhile: the writer's next
    /// batch has them together.
    @Test func aWriteToARunsKeysInTheBatchThatWritesTheRunFindsTheRun() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        let workflows = try SQLiteWorkflowStore(store: store)
        let definition = try #require(WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "a", "set": ["vars": ["x": 1]]]]]))
        let run = WorkflowRun(id: "wf-1", workflow: definition, input: [:], requestedBy: "cli")
        let outcomes = Mutex<(run: WorkflowCommitOutcome?, key: Result<MemoryEntry?, MemoryError>?)>((nil, nil))
        let bothDone = DispatchSemaphore(value: 0)
        let first = DispatchSemaphore(value: 0)
        // The retention's first pass, at the open, writes too: held out of it, the writer would
        // never take the first write.
        let passed = Date().addingTimeInterval(60)
        while store.statistics.bytesInUse == 0, Date() < passed { usleep(1_000) }
        try #require(store.statistics.bytesInUse > 0, "the retention's first pass ended")
        try store.withWriter { _ in
            memory.commit(MemoryWrite(scope: .agent, key: "first", operation: .put(1))) { _ in first.signal() }
            let deadline = Date().addingTimeInterval(60)
            while !store.queued.withLock({ $0.writing }), Date() < deadline { usleep(1_000) }
            #expect(store.queued.withLock { $0.writing }, "the writer took the first write")
            workflows.commit(WorkflowCommit(runs: [run])) { outcome in
                outcomes.withLock { $0.run = outcome }
                bothDone.signal()
            }
            memory.commit(MemoryWrite(scope: .workflowRun("wf-1"), key: "k", operation: .put(1))) { result in
                outcomes.withLock { $0.key = result }
                bothDone.signal()
            }
        }
        #expect(first.wait(timeout: .now() + 60) == .success, "the writer answered the first write")
        for _ in 0..<2 { #expect(bothDone.wait(timeout: .now() + 60) == .success, "the writer answered") }
        let (written, key) = outcomes.withLock { $0 }
        #expect(written == .written)
        #expect((try? key?.get())??.version == 1, "\(String(describing: key))")
        #expect(try memory.get("k", scope: .workflowRun("wf-1"))?.value == 1)
    }

    /// Keys an older version left under runs that are gone (it wrote any run's keys and never
    /// deleted them) go at the retention's next deletion of runs.
    @Test func keysLeftUnderGoneRunsGoAtTheNextRetention() async throws {
        let folder = TestPaths.temporaryDirectory("memory")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (store, memory) = try Self.open(folder)
        defer { store.close() }
        let workflows = try SQLiteWorkflowStore(store: store)
        try store.withWriter { db in
            for scope in ["run:never", "run:gone", "agent", "run:", "runner"] {
                try db.execute(sql: "INSERT INTO memory (scope, key, value, version, updated) VALUES (?, 'k', '1', 1, 0)", arguments: [scope])
            }
        }
        let definition = try #require(WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "a", "set": ["vars": ["x": 1]]]]]))
        var finished = WorkflowRun(id: "old", workflow: definition, input: [:], requestedBy: "cli")
        finished.status = .succeeded
        finished.endedAt = finished.startedAt + 1
        let kept = WorkflowRun(id: "kept", workflow: definition, input: [:], requestedBy: "cli")
        let committed = await withCheckedContinuation { continuation in
            workflows.commit(WorkflowCommit(runs: [finished, kept])) { continuation.resume(returning: $0) }
        }
        #expect(committed == .written)
        _ = try await memory.put("k", value: 2, scope: .workflowRun("kept"))
        #expect(try await workflows.prune(endedBefore: nil, keeping: 0) == 1)
        let scopes = try store.withWriter { db in try String.fetchAll(db, sql: "SELECT scope FROM memory ORDER BY scope") }
        #expect(scopes == ["agent", "run:kept", "runner"], "the keys of runs that do not exist went; others stayed: \(scopes)")
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
