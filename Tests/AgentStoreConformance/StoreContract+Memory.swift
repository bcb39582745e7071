import AgentWork
import Foundation
import JSONSchema
import Testing

/// Shared memory on every store: versions, compare-and-set and its refusals, lists in byte
/// order by page and scope, a workflow run's keys bound to its run.
extension StoreContract {
    /// Shared memory.
    package static let memory: [StoreCheck] = [
        StoreCheck("sharedMemoryCountsVersionsAndRefusesAWriteThatExpectedAnother", sharedMemoryCountsVersionsAndRefusesAWriteThatExpectedAnother),
        StoreCheck("sharedMemoryListsKeysInByteOrderByPageAndScope", sharedMemoryListsKeysInByteOrderByPageAndScope),
        StoreCheck("badKeysValuesAndVersionsAreRefusedAndWriteNothing", badKeysValuesAndVersionsAreRefusedAndWriteNothing),
        StoreCheck("aListPageEndsPastItsByteBoundAndThePagesHoldEveryKey", aListPageEndsPastItsByteBoundAndThePagesHoldEveryKey),
        StoreCheck("aRunsKeysAreWrittenOnlyWhileTheRunExistsAndGoWithItsRetention", aRunsKeysAreWrittenOnlyWhileTheRunExistsAndGoWithItsRetention),
    ]

    package static func write(_ memory: any MemoryStore, _ key: String, _ operation: MemoryWrite.Operation, expect version: Int? = nil,
                              scope: MemoryScope = .agent) async -> Result<MemoryEntry?, MemoryError> {
        await withCheckedContinuation { continuation in
            memory.commit(MemoryWrite(scope: scope, key: key, operation: operation, expectedVersion: version)) { continuation.resume(returning: $0) }
        }
    }

    package static func conflictVersion(_ result: Result<MemoryEntry?, MemoryError>) -> Int? {
        guard case .failure(let error) = result, error.code == .conflict else { return nil }
        return error.currentVersion
    }

    static func sharedMemoryCountsVersionsAndRefusesAWriteThatExpectedAnother(_ stores: StoresUnderTest) async throws {
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
    }

    static func sharedMemoryListsKeysInByteOrderByPageAndScope(_ stores: StoresUnderTest) async throws {
        let memory = stores.memory
        for key in ["b", "a_b", "B", "ab", "a%", "a"] { _ = try await Self.write(memory, key, .put(.string(key))).get() }
        #expect(await commit(stores.workflows, WorkflowCommit(runs: [workflowRun("r1")])) == .written)
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

        // A prefix is bytes: a key whose first character only begins with it (`e` and a
        // combining accent) matches, and the keys after it are not cut off.
        let accented = ["e", "ez", "e\u{301}", "e\u{301}\u{301}", "e\u{4E00}"]
        for key in accented.reversed() { _ = try await Self.write(memory, key, .put(.string(key))).get() }
        let page = try memory.list(scope: .agent, prefix: "e", after: nil, limit: 100)
        #expect(page.entries.map { Array($0.key.utf8) } == accented.map { Array($0.utf8) } && page.next == nil, "\(page.entries.map(\.key.debugDescription))")
        let rest = try memory.list(scope: .agent, prefix: "e", after: "ez", limit: 100)
        #expect(rest.entries.map { Array($0.key.utf8) } == accented.dropFirst(2).map { Array($0.utf8) })
    }

    static func aRunsKeysAreWrittenOnlyWhileTheRunExistsAndGoWithItsRetention(_ stores: StoresUnderTest) async throws {
        let memory = stores.memory
        func code(_ result: Result<MemoryEntry?, MemoryError>) -> MemoryError.Code? {
            if case .failure(let error) = result { return error.code }
            return nil
        }
        func keys(_ scope: MemoryScope) throws -> [String] { try memory.list(scope: scope, prefix: "", after: nil, limit: 100).entries.map(\.key) }
        let refused = await Self.write(memory, "k", .put(1), scope: .workflowRun("nope"))
        #expect(code(refused) == .notFound, "a run that does not exist: \(refused)")
        if case .failure(let error) = refused { #expect(error.message.contains("no workflow run \"nope\"") && error.pointer == "/run", "\(error)") }
        #expect(code(await Self.write(memory, "k", .put(1), expect: 0, scope: .workflowRun("nope"))) == .notFound, "whatever version it expects")
        #expect(code(await Self.write(memory, "k", .put(1), expect: 3, scope: .workflowRun("nope"))) == .notFound, "whatever version it expects")
        #expect(Self.listRefusal(memory, .workflowRun("nope"))?.pointer == "/run", "a list there is told the run is missing, not \"no keys\"")

        let t0 = Date().timeIntervalSince1970
        var done = workflowRun("done", status: .succeeded)
        done.endedAt = t0 - 60
        #expect(await commit(stores.workflows, WorkflowCommit(runs: [done, workflowRun("going")])) == .written)
        for scope in [MemoryScope.workflowRun("done"), .workflowRun("going"), .agent] {
            #expect(try await Self.write(memory, "a", .put(1), scope: scope).get()?.version == 1, "\(scope)")
            #expect(try await Self.write(memory, "b", .put(2), scope: scope).get()?.version == 1, "\(scope)")
        }
        #expect(try await Self.write(memory, "a", .put(3), expect: 1, scope: .workflowRun("done")).get()?.version == 2, "a finished run's keys are written")

        #expect(try await stores.workflows.prune(endedBefore: t0, keeping: nil) == 1)
        #expect(Self.listRefusal(memory, .workflowRun("done"))?.code == .notFound, "a run deleted by the retention takes its keys")
        #expect(try keys(.workflowRun("going")) == ["a", "b"], "an unfinished run keeps its keys")
        #expect(try keys(.agent) == ["a", "b"], "the agent's keys stay")
        #expect(code(await Self.write(memory, "a", .put(4), scope: .workflowRun("done"))) == .notFound, "a deleted run's keys are not written again")
        #expect(try await Self.write(memory, "a", .delete, scope: .workflowRun("done")).get() == nil, "a delete there finds nothing")
        #expect(await commit(stores.workflows, WorkflowCommit(runs: [workflowRun("empty")])) == .written)
        #expect(try keys(.workflowRun("empty")).isEmpty, "a run that has no keys lists none")
    }

    /// The refusal of a list in `scope` (nil: it was listed).
    static func listRefusal(_ memory: any MemoryStore, _ scope: MemoryScope) -> MemoryError? {
        do throws(MemoryError) {
            _ = try memory.list(scope: scope, prefix: "", after: nil, limit: 100)
            return nil
        } catch {
            return error
        }
    }

    static func aListPageEndsPastItsByteBoundAndThePagesHoldEveryKey(_ stores: StoresUnderTest) async throws {
        let memory = stores.memory
        // Eight values of 200,000 bytes: a page of 1 MiB holds six (the sixth passes the bound).
        let value = JSONValue.string(String(repeating: "v", count: 200_000))
        let keys = (0..<8).map { "big/\($0)" }
        for key in keys { _ = try await Self.write(memory, key, .put(value)).get() }
        let first = try memory.list(scope: .agent, prefix: "big/", after: nil, limit: 100)
        let perPage = MemoryLimits.listBytes / 200_002 + 1
        #expect(first.entries.count == perPage && first.next == keys[perPage - 1], "\(first.entries.count) entries, next \(first.next ?? "none")")
        var listed = first.entries.map(\.key), next = first.next
        while let after = next {
            let page = try memory.list(scope: .agent, prefix: "big/", after: after, limit: 100)
            listed += page.entries.map(\.key)
            next = page.next
        }
        #expect(listed == keys)
    }

    static func badKeysValuesAndVersionsAreRefusedAndWriteNothing(_ stores: StoresUnderTest) async throws {
        let memory = stores.memory
        func code(_ result: Result<MemoryEntry?, MemoryError>) -> MemoryError.Code? {
            if case .failure(let error) = result { return error.code }
            return nil
        }
        #expect(code(await Self.write(memory, "", .put(1))) == .invalid, "an empty key")
        #expect(code(await Self.write(memory, String(repeating: "k", count: MemoryLimits.keyBytes + 1), .put(1))) == .invalid, "a key too long")
        #expect(code(await Self.write(memory, "a\nb", .put(1))) == .invalid, "a control character")
        #expect(code(await Self.write(memory, "k", .put(1), expect: -1)) == .invalid, "a negative version")
        #expect(code(await Self.write(memory, "k", .put(1), scope: .workflowRun(""))) == .invalid, "an empty run id")
        let large = JSONValue.string(String(repeating: "x", count: MemoryLimits.valueBytes))
        #expect(code(await Self.write(memory, "k", .put(large))) == .tooLarge)
        #expect(try memory.list(scope: .agent, prefix: "", after: nil, limit: 100).entries.isEmpty, "nothing was written")
        _ = try await Self.write(memory, "a", .put(1)).get()
        _ = try await Self.write(memory, "b", .put(2)).get()
        let page = try memory.list(scope: .agent, prefix: "", after: nil, limit: 0)
        #expect(page.entries.map(\.key) == ["a"] && page.next == "a", "a limit below 1 lists one entry")
        #expect(throws: MemoryError.self) { try memory.get("", scope: .agent) }
    }
}
