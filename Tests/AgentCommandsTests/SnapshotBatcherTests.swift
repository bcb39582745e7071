@testable import AgentCommands
@testable import AgentLoop
import AgentTestSupport
import Foundation
import Synchronization
import Testing

/// The batching of `status`/`metrics` snapshots: requests that join before the loop is asked
/// share one snapshot.
@Suite(.ownThreads) struct SnapshotBatcherTests {
    /// An empty snapshot; the test only counts how many are taken.
    private static func emptySnapshot() -> AgentSnapshot {
        AgentSnapshot(pid: getpid(), takenAt: 0, uptime: 0, stopping: false, processes: [], disabled: [], store: nil, storePath: nil,
                      outputs: [], forkServer: .null, totals: .init(), chatRequests: 0)
    }

    /// A value shared between the test's tasks.
    final class Shared<Value: Sendable>: Sendable {
        let value: Mutex<Value>
        init(_ value: Value) { self.value = Mutex(value) }
        func withLock<R: Sendable>(_ body: (inout Value) -> R) -> R { value.withLock { body(&$0) } }
    }

    @Test func requestsMadeBeforeADeferredAskShareOneSnapshot() async {
        let inbox = LoopInbox()
        let taken = Shared(0)
        let batcher = SnapshotBatcher(inbox: inbox) {
            taken.withLock { $0 += 1 }
            return Self.emptySnapshot()
        }
        // The front holds the ask until it says so (as the HTTP front runs it after the
        // handlers its event loop has queued).
        let held = Shared<[@Sendable () -> Void]>([])
        batcher.deferRequests { ask in held.withLock { $0.append(ask) } }
        let answers = Shared<[ObjectIdentifier]>([])
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    if let shared = await batcher.snapshot() { answers.withLock { $0.append(ObjectIdentifier(shared)) } }
                }
            }
            // Wait until all eight have joined (one ask is held), then let it go and run
            // the loop's side.
            while true {
                let joined = batcher.waitingCount
                if joined == 8 { break }
                try? await Task.sleep(nanoseconds: 1_000_000)
            }
            let asks = held.withLock { $0 }
            #expect(asks.count == 1)
            for ask in asks { ask() }
            inbox.isolated { inbox.drain() }
        }
        #expect(taken.withLock { $0 } == 1)
        #expect(Set(answers.withLock { $0 }).count == 1)
        #expect(answers.withLock { $0 }.count == 8)
    }

    /// Every request reaches the front's deferral through the same frames, however many came
    /// before: reading the deferral must not wrap it again (it did, through the inout of a
    /// generic lock, two thunks a request, so each `status` answer made the next dearer and
    /// releasing the chain recursed thousands of frames deep).
    @Test func theDeferralCostsTheSameForTheThousandthRequestAsForTheFirst() async {
        let inbox = LoopInbox()
        let batcher = SnapshotBatcher(inbox: inbox) { Self.emptySnapshot() }
        let depths = Shared<[Int]>([])
        batcher.deferRequests { ask in
            let depth = Thread.callStackReturnAddresses.count
            ask()
            depths.withLock { $0.append(depth) }
        }
        for request in 0..<1_000 {
            async let answer = batcher.snapshot()
            // The ask is posted once the deferral has recorded it.
            while depths.withLock({ $0.count }) == request { await Task.yield() }
            inbox.isolated { inbox.drain() }
            #expect(await answer != nil)
        }
        let seen = depths.withLock { $0 }
        #expect(seen.count == 1_000)
        #expect(seen.first == seen.last, "the first request's deferral ran \(seen.first ?? 0) frames deep, the last's \(seen.last ?? 0)")
    }
}
