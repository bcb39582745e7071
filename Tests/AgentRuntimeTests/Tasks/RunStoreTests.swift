import Foundation
import Logging
import Testing
@testable import AgentRuntime

/// Runs in a real SQLite store: written through the store's writer, read back, pruned.
@Suite struct RunStoreTests {
    static func open(_ settings: StoreSettings = StoreSettings()) throws -> (AgentStore, SQLiteRunStore, String) {
        let folder = TestPaths.temporaryDirectory("runs")
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        return (store, try SQLiteRunStore(store: store), folder)
    }

    static func run(_ id: String, task: String = "t", status: TaskRun.Status, endedAt: Double? = nil) -> TaskRun {
        var run = TaskRun(id: id, task: task, input: ["n": .string(id)], priority: .high, requestedBy: .http)
        run.status = status
        run.attempt = status == .queued ? 0 : 1
        run.endedAt = endedAt ?? (status.isFinished ? Date().timeIntervalSince1970 : nil)
        if status == .failed {
            run.error = "exit 3"
            run.exitCode = 3
            run.stderrTail = "boom\n"
            run.output = ["partial": true]
        }
        return run
    }

    /// Waits until the writer has committed what was handed to it.
    static func flush(_ runs: SQLiteRunStore, until condition: () throws -> Bool) throws {
        let deadline = Date().addingTimeInterval(10)
        while try !condition(), Date() < deadline { Thread.sleep(forTimeInterval: 0.01) }
    }

    @Test func everyChangeIsWrittenAndTheLastOneWins() throws {
        let (store, runs, folder) = try Self.open()
        defer { store.close(); try? FileManager.default.removeItem(atPath: folder) }
        runs.record(Self.run("a", status: .queued))
        runs.record(Self.run("a", status: .running))
        runs.record(Self.run("a", status: .failed))
        runs.record(Self.run("b", task: "other", status: .queued))
        try Self.flush(runs) { try runs.run(id: "b") != nil && runs.run(id: "a")?.status == .failed }
        let a = try #require(try runs.run(id: "a"))
        #expect(a.status == .failed)
        #expect(a.exitCode == 3)
        #expect(a.error == "exit 3")
        #expect(a.stderrTail == "boom\n")
        #expect(a.input == ["n": "a"])
        #expect(a.output == ["partial": true])
        #expect(a.endedAt != nil)
        #expect(a.priority == .high)
        #expect(a.requestedBy == .http)
        #expect(try runs.loadUnfinished().map(\.id) == ["b"])
        #expect(try runs.list(RunFilter(task: "t")).map(\.id) == ["a"])
        #expect(try runs.list(RunFilter(status: .queued)).map(\.id) == ["b"])
        #expect(try runs.list(RunFilter(limit: 1)).map(\.id) == ["b"], "newest first")
        #expect(try runs.run(id: "nope") == nil)
    }

    @Test func retentionDeletesOldAndSurplusFinishedRunsButNeverUnfinishedOnes() throws {
        let (store, runs, folder) = try Self.open()
        defer { store.close(); try? FileManager.default.removeItem(atPath: folder) }
        let old = Date().timeIntervalSince1970 - 3600
        runs.record(Self.run("old", status: .succeeded, endedAt: old))
        runs.record(Self.run("waiting", status: .queued))
        for index in 0..<5 { runs.record(Self.run("new\(index)", status: .succeeded)) }
        try Self.flush(runs) { try runs.list(RunFilter(limit: 100)).count == 7 }
        #expect(try runs.prune(endedBefore: Date().timeIntervalSince1970 - 60, keeping: nil) == 1)
        #expect(try runs.prune(endedBefore: nil, keeping: 2) == 3)
        #expect(Set(try runs.list(RunFilter(limit: 100)).map(\.id)) == ["waiting", "new3", "new4"])
    }
}

