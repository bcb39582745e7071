import CAgentSystem
import Foundation
import Synchronization

/// Gives the C heap's free pages back to the system once large values were let go.
///
/// glibc keeps what a process freed for its next allocations: after 40 queued runs of 1 MiB
/// were cancelled the supervisor stayed 70 MB larger for the rest of its life (its mmap
/// threshold rises past a MiB at the first such free, so later large blocks come from the heap,
/// which only a trim gives back). ``released(_:)`` counts what was let go; past ``threshold``
/// a trim runs a second later (one for a burst of ends) on a thread of its own, off the loop
/// (a trim holds each arena's lock while it gives its pages back: the loop may wait for it
/// those few milliseconds if it allocates meanwhile).
package final class HeapTrim: Sendable {
    /// The process's one.
    package static let shared = HeapTrim()

    /// Bytes let go that make a trim worth its while.
    package static let threshold = 32 << 20

    private struct State {
        var released = 0
        var scheduled = false
    }

    private let state = Mutex(State())
    private let pool = BlockingPool(name: "agent-heap-trim", width: 1)
    /// Trims scheduled and done, for the tests.
    private let scheduledCount = Atomic(0)
    private let done = Atomic(0)

    package init() {}

    /// Counts `bytes` let go (any thread); schedules a trim past ``threshold``.
    package func released(_ bytes: Int) {
        guard bytes > 0 else { return }
        let start = state.withLock { state -> Bool in
            state.released += bytes
            guard state.released >= Self.threshold, !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        guard start else { return }
        scheduledCount.add(1, ordering: .relaxed)
        pool.submit { [self] in
            // What else ends in the next second is given back by the same trim.
            Thread.sleep(forTimeInterval: 1)
            state.withLock { $0 = State() }
            _ = agent_malloc_trim()
            done.add(1, ordering: .relaxed)
        }
    }

    /// Trims made so far.
    package var trims: Int { done.load(ordering: .relaxed) }
    /// Trims scheduled so far (made, or waiting their second).
    package var scheduled: Int { scheduledCount.load(ordering: .relaxed) }
}
