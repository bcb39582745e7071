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
@Suite struct WALCheckpointTests {
    /// Commits `megabytes` commits of 1 MiB of events, each waited for.
    private static func commit(_ megabytes: Int, to store: AgentStore) {
        let payload = Array("\"\(String(repeating: "x", count: 10_000))\"".utf8)
        // Stamped now, so that the retention keeps them.
        let now = Date().timeIntervalSince1970
        for batch in 0..<megabytes {
            for index in 0..<99 {
                store.append(type: "blob", source: "test", time: now + Double(batch * 100 + index) / 1000, payload: payload)
            }
            let committed = DispatchSemaphore(value: 0)
            let outcome = Guarded(false)
            store.commitEvent(type: "blob", source: "test", time: now + Double(batch * 100 + 99) / 1000, payload: payload) { ok in
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
        let store = try AgentStore(path: path, settings: StoreSettings(), logger: Logger(label: "test"))
        Self.commit(24, to: store)
        // The thread is asked at 4 MiB; the writer waits for it at 8 MiB: it has checkpointed
        // by then, or does once it runs.
        let deadline = Date().addingTimeInterval(60)
        while store.checkpoints.byThread == 0, Date() < deadline { usleep(10_000) }
        #expect(store.checkpoints.byThread > 0, "checkpoints: \(store.checkpoints)")
        let wal = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.size] as? Int ?? -1
        let database = try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int ?? -1
        // At most 8 MiB, plus the commit that crossed it (1 MiB and its pages).
        #expect(wal > 0 && wal <= 10 << 20, "the WAL is \(wal) bytes after 24 MiB of events")
        #expect(database >= 16 << 20, "the database holds \(database) bytes: the WAL was not checkpointed into it")
        store.close()
        // Every event is there.
        let rows = try DatabaseQueue(path: path).read { try Int.fetchOne($0, sql: "SELECT count(*) FROM events") }
        #expect(rows == 2_400, "statistics: \(store.statistics)")
    }
}
