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

    /// Runs what was posted.
    @LoopActor package func drain() {
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
        let work = pending.withLock { list -> [Work] in
            defer { list.removeAll() }
            return list
        }
        for item in work { item() }
    }
}
