import CAgentSystem
import Foundation
import Synchronization

/// Work handed to the loop from other threads (the store's writer, the query runner).
final class LoopInbox: Sendable {
    let fd: Int32
    private let pending = Mutex<[@Sendable () -> Void]>([])

    init() {
        fd = eventfd(0, Int32(EFD_NONBLOCK | EFD_CLOEXEC))
    }

    deinit { close(fd) }

    /// Queues `work` and wakes the loop. Any thread.
    func post(_ work: @escaping @Sendable () -> Void) {
        pending.withLock { $0.append(work) }
        var one: UInt64 = 1
        _ = write(fd, &one, 8)
    }

    /// Runs what was posted. Loop thread only.
    func drain() {
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
struct LoopBound<Value>: @unchecked Sendable {
    let value: Value
}
