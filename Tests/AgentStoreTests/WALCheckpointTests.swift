import AgentCore
import AgentStore
import AgentTestSupport
import Foundation
import GRDB
import Logging
import Testing

/// The WAL is copied back into the database by a thread of the store's own, not in the
/// writer's commits, and stays bounded: SQLite checkpoints every 1,000 pages, 16 MiB of WAL
/// with 16 KiB pages; the store asks its thread at 4 MiB, the size the full-disk guarantees
/// were tested with, and the writer copies the rest itself at 8 MiB.
@Suite(.ownThreads) struct WALCheckpointTests {
    /// Events of 16,000 bytes: one to a 16 KiB page, so that 64 of them are about 1 MiB of WAL.
    private static let payload = Array("\"\(String(repeating: "x", count: 15_998))\"".utf8)
    private static let eventsPerCommit = 64

    /// Commits `megabytes` commits of about 1 MiB of events, each waited for.
    private static func commit(_ megabytes: Int, to store: AgentStore) {
        // Stamped now, so that the retention keeps them.
        let now = Date().timeIntervalSince1970
        for batch in 0..<megabytes {
            let first = batch * eventsPerCommit
            for index in first..<(first + eventsPerCommit - 1) {
                store.append(type: "blob", source: "test", time: now + Double(index) / 1000, payload: payload)
            }
            let committed = DispatchSemaphore(value: 0)
            let outcome = Guarded(false)
            store.commitEvent(type: "blob", source: "test", time: now + Double(first + eventsPerCommit - 1) / 1000, payload: payload) { ok in
                outcome.withLock { $0 = ok }
                committed.signal()
            }
            #expect(committed.wait(timeout: .now() + 120) == .success, "batch \(batch) not committed within 120 s")
            #expect(outcome.withLock { $0 }, "batch \(batch) could not be written")
        }
    }

    @Test func theWALIsCheckpointedByTheStoresOwnThreadAndKeepsItsBound() throws {
        let folder = TestPaths.temporaryDirectory("wal-checkpoint")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        // The writer waits for the thread as long as a checkpoint takes on a loaded machine, so
        // that the bound is exact (by default it stops waiting after 2 s).
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"), checkpointWait: 300)
        defer { store.close() }
        Self.commit(24, to: store)
        // The thread is asked at 4 MiB; the writer waits for it at 8 MiB: it has copied frames
        // back by then, or does once it runs.
        let deadline = Date().addingTimeInterval(60)
        while store.checkpoints.byThread == 0, Date() < deadline { usleep(10_000) }
        #expect(store.checkpoints.byThread > 0, "checkpoints: \(store.checkpoints)")
        #expect(store.checkpoints.writerWaitsTimedOut == 0)
        // The WAL file keeps its largest size: at most 8 MiB of pages and the commit that
        // crossed it (a frame is a page and 24 bytes; 80 frames for a commit and its index pages).
        let frameBytes = AgentStore.pageSize + 24
        let bound = (8 << 20) / AgentStore.pageSize * frameBytes + 80 * frameBytes
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? -1
        let database = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1
        #expect(wal > 0 && wal <= bound, "the WAL is \(wal) bytes after 24 MiB of events (bound \(bound))")
        #expect(database >= 12 << 20, "the database holds \(database) bytes: the WAL was not checkpointed into it")
        store.close()
        // Every event is there.
        let rows = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") }
        #expect(rows == 24 * Self.eventsPerCommit, "statistics: \(store.statistics)")
    }
}
