import AgentStore
import AgentTestSupport
import AgentWork
import Foundation
import GRDB
import JSONSchema
import Logging
import Testing

/// The SQLite store keeps a run's record for lists (`listed`) only when a member of it is too
/// long for a list, so that a list reads no long member and a run without one costs no second
/// text; a record without its long members is what a list parses.
@Suite(.ownThreads) struct ListedRecordTests {
    /// A store in a folder of its own, with its runs.
    static func open(_ label: String) throws -> (AgentStore, SQLiteRunStore) {
        let store = try AgentStore(path: TestPaths.temporaryDirectory(label) + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        return (store, try SQLiteRunStore(store: store))
    }

    /// Closes `store` and removes its folder.
    static func close(_ store: AgentStore) {
        store.close()
        try? FileManager.default.removeItem(atPath: (store.path as NSString).deletingLastPathComponent)
    }

    static func listed(_ id: String, table: String, at path: String) throws -> String? {
        try AgentStore.readOnlyQueue(path: path).read { db in
            try String?.fetchOne(db, sql: "SELECT listed FROM \(table) WHERE id = ?", arguments: [id]) ?? nil
        }
    }

    @Test func onlyARunWithAMemberLongerThanTheLimitHasARecordForListsAndItHoldsNoLongMember() async throws {
        let (store, runs) = try Self.open("listed-records")
        defer { Self.close(store) }
        // Longer than the limit in all, no member longer than it.
        var wide = TaskRun(id: "wide", task: "t", input: ["a": .string(String(repeating: "a", count: 3_000))], requestedBy: .cli)
        wide.output = ["b": .string(String(repeating: "b", count: 3_000))]
        wide.error = String(repeating: "c", count: 3_000)
        let long = TaskRun(id: "long", task: "t", input: ["a": .string(String(repeating: "a", count: 1_000_000))], requestedBy: .cli)
        runs.record(wide)
        runs.record(long)
        await runs.flush()

        #expect(try Self.listed("wide", table: "task_runs", at: store.path) == nil, "no member too long: the list reads the record")
        let text = try #require(try Self.listed("long", table: "task_runs", at: store.path))
        #expect(text.utf8.count < 1_000, "\(text.utf8.count) bytes")
        let record = try JSONValue.parse(Data(text.utf8))
        #expect(record["omitted"] == ["input"])
        #expect(record["input"] == nil)
        #expect(record["id"] == "long")

        let workflows = try SQLiteWorkflowStore(store: store)
        let definition = WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "a", "set": ["vars": ["x": 1]]]]])!
        var run = WorkflowRun(id: "w", workflow: definition, input: ["n": 1], requestedBy: "cli")
        run.variables = ["v": .string(String(repeating: "v", count: 10_000))]
        let done = AsyncStream<WorkflowCommitOutcome>.makeStream()
        workflows.commit(WorkflowCommit(runs: [run])) { done.continuation.yield($0) }
        for await outcome in done.stream {
            #expect(outcome == .written)
            break
        }
        let workflowText = try #require(try Self.listed("w", table: "workflow_runs", at: store.path))
        #expect(try JSONValue.parse(Data(workflowText.utf8))["omitted"] == ["variables"])
    }

    /// A runtime from before the record for lists rewrites a run's record alone: a list no
    /// longer takes the stale record for lists (its length is not the record's), but the record.
    @Test func aRecordWrittenWithoutItsRecordForListsIsListedFromTheRecord() async throws {
        let (store, runs) = try Self.open("listed-stale")
        defer { Self.close(store) }
        var run = TaskRun(id: "r", task: "t", input: ["a": .string(String(repeating: "a", count: 200_000))], requestedBy: .cli)
        runs.record(run)
        await runs.flush()
        #expect(try await runs.list(RunFilter()).first?.omitted == ["input"], "read from the record for lists")
        run.status = .cancelled
        try store.withWriter { db in
            try db.execute(sql: "UPDATE task_runs SET status = ?, finished = 1, data = ? WHERE id = ?",
                           arguments: ["cancelled", run.storedJSON.serialized(), "r"])
        }
        #expect(try Self.listed("r", table: "task_runs", at: store.path) != nil, "the stale one is still there")
        let listed = try await runs.list(RunFilter(status: .cancelled))
        #expect(listed.map(\.run.status) == [.cancelled])
        #expect(listed.first?.omitted == [])
        #expect(listed.first?.run.input == run.input, "read from the record itself")
        // This runtime's next write makes it current again.
        run.status = .succeeded
        runs.record(run)
        await runs.flush()
        #expect(try await runs.list(RunFilter()).first?.omitted == ["input"])
    }

    /// This runtime's own write of a longer long member keeps a current record for lists, and a
    /// list stops reading at its byte bound.
    @Test func aLongMemberGrownKeepsTheRecordForListsAndAListStopsReadingAtItsBound() async throws {
        let (store, runs) = try Self.open("listed-grown")
        defer { Self.close(store) }
        var run = TaskRun(id: "r", task: "t", input: ["a": .string(String(repeating: "a", count: 20_000))], requestedBy: .cli)
        runs.record(run)
        await runs.flush()
        run.input = ["a": .string(String(repeating: "a", count: 30_000))]
        runs.record(run)
        await runs.flush()
        #expect(try await runs.list(RunFilter(task: "t")).first?.omitted == ["input"], "only the long member changed")

        // Records of 6 KB, none with a record for lists: 2,000 of them are 12 MB.
        for n in 0..<2_000 { runs.record(TaskRun(id: "m\(n)", task: "m", input: ["a": .string(String(repeating: "m", count: 6_000))], requestedBy: .cli)) }
        await runs.flush()
        let page = try await runs.list(RunFilter(task: "m", limit: 10_000))
        #expect(page.cut)
        #expect(page.count < 2_000 && page.count * 6_000 > RunListing.readLimit / 2, "\(page.count) runs")
        #expect(page.first?.run.id == "m1999", "the newest first")
        let answer = TaskRunsCommand.Answer(runs: page.map { RunListing.shown($0.run.json, omitted: $0.omitted) }, stored: true, cut: page.cut)
        #expect(answer.truncated == true)
        #expect(try await runs.list(RunFilter(task: "m", limit: 100)).cut == false)
    }
}
