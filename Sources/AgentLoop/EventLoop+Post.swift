import CAgentSystem
import Foundation
import Synchronization

/// Work handed to the loop from other threads (the store's writer, the query runner): it runs
/// isolated to ``LoopActor``, on exactly this inbox's loop.
package final class LoopInbox: Sendable {
    package typealias Work = @Sendable @LoopActor () -> Void

    package let fd: Int32
    private let pending = Mutex<[Work]>([])

    package init() {
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit { close(fd) }

    /// Queues `work`, isolated to the loop, and wakes the loop: like `Task { @LoopActor in … }`
    /// but on exactly this inbox's loop (right with several loops in a process, see
    /// ``LoopExecutor``) and cheaper (one closure, no task). Any thread.
    ///
    /// Only the post that finds the queue empty writes the eventfd: the loop reads the eventfd
    /// before it takes the queue, so work queued behind it is taken by the same drain, and
    /// many posts between two turns of the loop cost one wake-up rather than a write each.
    package func post(_ work: @escaping Work) {
        let wasEmpty = pending.withLock { list in
            defer { list.append(work) }
            return list.isEmpty
        }
        guard wasEmpty else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Runs `body` isolated to the loop, synchronously on this thread, which is the loop's for
    /// the call (see ``EventLoop/isolated(_:)``): for code that owns the loop but holds only its
    /// inbox (the supervisor's entry points, whose loop is its own state).
    @discardableResult
    package func isolated<T>(_ body: @LoopActor () throws -> T) rethrows -> T {
        let outer = LoopExecutor.enter(self)
        defer { LoopExecutor.restore(outer) }
        return try LoopActor.assumeIsolated(body)
    }

    /// The longest one drain runs what was posted (at least one item): the rest waits for the
    /// next turn of the loop, ahead of what is posted meanwhile, so that a burst (thousands of
    /// commits landing at once) does not hold the loop's other work.
    package static let drainSlice = 0.004

    /// Runs what was posted, for at most ``drainSlice``.
    @LoopActor package func drain() {
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
        let work = pending.withLock { list -> [Work] in
            defer { list.removeAll() }
            return list
        }
        let began = EventLoop.now()
        for (index, item) in work.enumerated() {
            if index > 0, EventLoop.now() - began >= Self.drainSlice {
                putBack(work[index...])
                return
            }
            item()
        }
    }

    /// Puts `work` back ahead of what was posted since, and makes sure the loop wakes for it.
    private func putBack(_ work: ArraySlice<Work>) {
        let wasEmpty = pending.withLock { list in
            defer { list.insert(contentsOf: work, at: 0) }
            return list.isEmpty
        }
        // A post that found the queue empty since has woken the loop already.
        guard wasEmpty else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }
}
