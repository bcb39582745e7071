@testable import AgentStore
import AgentTestSupport
import AgentWork
import Foundation
import Logging
import Synchronization
import Testing

/// Task runs' changes group-commit as events do (each written at once cost a transaction of
/// whole pages: three for a no-op run requested one at a time); a new run a request waits for
/// is committed at once and takes what waits with it, and a read after
/// ``AgentStore/whenWritten(within:_:)`` sees every change recorded before it.
@Suite(.ownThreads, .serialized) struct RunGroupCommitTests {
    @Test func aRunsChangeWaitsTheCommitIntervalFromTheFirstWhileANewRunIsWrittenAtOnce() {
        var queued = AgentStore.Queued()
        let wake = Date().addingTimeInterval(3600)
        queued.runs.append(TaskRun(id: "r-1", task: "t", requestedBy: .cli))
        queued.oldestRunSince = Date()
        let first = queued.oldestRunSince
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == first.addingTimeInterval(0.25))
        #expect(!queued.isSettled, "a change that waits keeps the store unsettled: a reader waits for it")
        queued.scheduleCommits.append((change: ScheduleCommit(runs: [TaskRun(id: "r-2", task: "t", requestedBy: .cli)]), done: { _ in }))
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == nil, "a new run is written at once, with the change")
        let batch = queued.take()
        #expect(batch.runs.count == 1 && batch.schedules.count == 1)
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == wake, "nothing waits: asleep until the retention is due")
    }

    @Test func changesThatWaitGoInTheTransactionOfTheNextNewRunAndAReadSeesThem() throws {
        let folder = TestPaths.temporaryDirectory("run-group-commit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = StoreSettings()
        // Longer than the test: only a new run or whenWritten can have the changes written.
        settings.commitInterval = 600
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        func commitNew(_ run: TaskRun) -> Bool {
            let written = Mutex(false)
            let done = DispatchSemaphore(value: 0)
            runs.commitNew([run]) { ok in
                written.withLock { $0 = ok }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 120) == .success)
            return written.withLock { $0 }
        }
        #expect(commitNew(TaskRun(id: "first", task: "t", requestedBy: .cli)))
        let before = store.statistics.batches
        for number in 1...20 {
            var run = TaskRun(id: "r-\(number)", task: "t", requestedBy: .cli)
            run.status = .succeeded
            runs.record(run)
        }
        #expect(commitNew(TaskRun(id: "new", task: "t", requestedBy: .cli)))
        #expect(store.statistics.batches - before == 1, "20 changes and a new run in \(store.statistics.batches - before) transactions")
        let stored = try #require(try? SQLiteRunStore.list(RunFilter(limit: 100), reader: AgentStore.readOnlyQueue(path: store.path)))
        #expect(stored.count == 22)

        // A change alone waits for its interval, unless a reader asks.
        var late = TaskRun(id: "late", task: "t", requestedBy: .cli)
        late.status = .failed
        runs.record(late)
        let seen = Mutex<TaskRun?>(nil)
        let done = DispatchSemaphore(value: 0)
        let path = store.path
        store.whenWritten(within: 120) {
            seen.withLock { $0 = try? SQLiteRunStore.readRun(id: "late", reader: AgentStore.readOnlyQueue(path: path)) }
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 120) == .success)
        #expect(seen.withLock { $0?.status } == .failed)
    }
}
