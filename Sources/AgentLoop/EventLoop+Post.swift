import CAgentSystem
import Foundation
import Synchronization

/// Work handed to the loop from other threads (the store's writer, the query runner).
package final class LoopInbox: Sendable {
    package let fd: Int32
    private let pending = Mutex<[@Sendable () -> Void]>([])

    package init() {
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit { close(fd) }

    /// Queues `work` and wakes the loop. Any thread.
    ///
    /// Only the post that finds the queue empty writes the eventfd: the loop reads the eventfd
    /// before it takes the queue, so work queued behind it is taken by the same drain, and
    /// many posts between two turns of the loop cost one wake-up rather than a write each.
    package func post(_ work: @escaping @Sendable () -> Void) {
        let wasEmpty = pending.withLock { list in
            defer { list.append(work) }
            return list.isEmpty
        }
        guard wasEmpty else { return }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Queues `work`, isolated to the loop, and wakes the loop: like `Task { @LoopActor in … }`
    /// but on exactly this inbox's loop (right with several loops in a process, see
    /// ``LoopExecutor``) and cheaper (one closure, no task). Any thread.
    package func postIsolated(_ work: @escaping @LoopActor @Sendable () -> Void) {
        post { LoopActor.assumeIsolated(work) }
    }

    /// Runs what was posted. Loop thread only.
    package func drain() {
        var counter: UInt64 = 0
        _ = read(fd, &counter, 8)
        let work = pending.withLock { list -> [@Sendable () -> Void] in
            defer { list.removeAll() }
            return list
        }
        for item in work { item() }
    }
}

/// Lets loop-confined objects cross into work posted back to the loop.
package struct LoopBound<Value>: @unchecked Sendable {
    package let value: Value

    package init(value: Value) {
        self.value = value
    }
}
