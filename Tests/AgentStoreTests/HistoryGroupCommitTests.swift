@testable import AgentStore
import AgentTestSupport
import Foundation
import Logging
import Synchronization
import Testing

/// Processes' history lines group-commit as events do: the writer is woken by the first line and waits
/// the commit interval from it, so that a start of many workers (two lines each) costs a few
/// transactions, not one per line; a read through ``AgentStore/whenWritten(within:_:)`` still
/// sees every line recorded before it.
@Suite(.ownThreads, .serialized) struct HistoryGroupCommitTests {
    static func line(_ number: Int) -> HistoryEntry {
        HistoryEntry(time: 1_800_000_000 + Double(number), process: "p\(number % 3)", event: "started", pid: Int32(1000 + number))
    }

    @Test func historyLinesWaitTheCommitIntervalFromTheFirstWhileAStateSaveOrAnAuditLineIsWrittenAtOnce() {
        var queued = AgentStore.Queued()
        let wake = Date().addingTimeInterval(3600)
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == wake, "nothing waits: asleep until the retention is due")
        let woken = queued.append(Self.line(1), atOnce: false)
        #expect(woken, "the first line wakes the writer")
        let first = queued.oldestHistorySince
        let wokenAgain = queued.append(Self.line(2), atOnce: false)
        #expect(!wokenAgain, "a later line does not")
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == first.addingTimeInterval(0.25))
        #expect(queued.sleep(wake: first, commitInterval: 0.25) == first.addingTimeInterval(0.25),
                "the retention's wake-up waits for the commit, as with events")
        #expect(!queued.isSettled)
        queued.states.append((process: "p1", data: [1], done: nil))
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == nil, "a state save is written at once, with the lines")
        let batch = queued.take()
        #expect(batch.history.count == 2 && batch.states.count == 1)
        let audit = queued.append(Self.line(9), atOnce: true)
        #expect(audit && queued.sleep(wake: wake, commitInterval: 0.25) == nil, "a command's audit line is written at once")
        _ = queued.take()
        #expect(queued.sleep(wake: wake, commitInterval: 0.25) == wake, "and the next waits again")
        let wokenAfterTake = queued.append(Self.line(3), atOnce: false)
        #expect(wokenAfterTake, "after a take, the next line starts a new wait")
    }

    @Test func aReadAfterWhenWrittenSeesLinesThatAreStillWaitingForTheirGroupCommit() throws {
        let folder = TestPaths.temporaryDirectory("history-group-commit")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var settings = StoreSettings()
        // Longer than the test: only whenWritten can have the lines written.
        settings.commitInterval = 600
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: settings, logger: Logger(label: "test"))
        defer { store.close() }
        let path = store.path
        func linesSeenAfterWhenWritten() -> Int? {
            let seen = Mutex<Int?>(nil)
            let done = DispatchSemaphore(value: 0)
            store.whenWritten(within: 120) {
                seen.withLock { $0 = (try? StoreReader(path: path).history(process: nil, limit: 100).count) ?? -1 }
                done.signal()
            }
            #expect(done.wait(timeout: .now() + 120) == .success)
            return seen.withLock { $0 }
        }
        // The writer's first round (a retention pass at the start) is over after this one.
        store.record(Self.line(0), atOnce: false)
        #expect(linesSeenAfterWhenWritten() == 1)
        let before = store.statistics.batches
        for number in 1...20 { store.record(Self.line(number), atOnce: false) }
        #expect(linesSeenAfterWhenWritten() == 21)
        #expect(store.statistics.batches - before == 1, "20 lines in \(store.statistics.batches - before) transactions")
    }
}
