import CAgentSystem
import Foundation
import Synchronization

/// Threads of their own for blocking work: a store read that takes seconds (a chat history of
/// megabytes, `events` over a big store). Swift's cooperative pool is as wide as the cores (two
/// here): two such reads on it would stall every task of the process, the HTTP front's among
/// them. Threads start on first use, up to `width`; jobs beyond wait their turn in order.
package final class BlockingPool: Sendable {
    /// The pool the store reads of commands (`events`, `history`, `chat_history`) run on: as
    /// wide as the cores (reading and encoding a big answer is CPU work; more threads would
    /// only take the loop's share).
    package static let storeReads = BlockingPool(name: "agent-store-read", width: max(2, ProcessInfo.processInfo.activeProcessorCount))

    private struct State {
        var jobs: [@Sendable () -> Void] = []
        var threads = 0
    }

    private let name: String
    private let width: Int
    private let state = Mutex(State())
    /// Counts the jobs queued and not yet taken.
    private let queued = DispatchSemaphore(value: 0)

    package init(name: String, width: Int) {
        self.name = name
        self.width = max(1, width)
    }

    /// Runs `job` on one of the pool's threads.
    package func submit(_ job: @escaping @Sendable () -> Void) {
        let startThread = state.withLock { state -> Bool in
            state.jobs.append(job)
            guard state.threads < width else { return false }
            state.threads += 1
            return true
        }
        if startThread {
            // Named by the thread itself through pthread (truncated to the kernel's 15 bytes).
            Thread { [self] in
                agent_set_thread_name(name)
                work()
            }.start()
        }
        queued.signal()
    }

    /// Runs `body` on one of the pool's threads and gives its result to the awaiting task,
    /// which holds no thread meanwhile.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            submit { continuation.resume(returning: body()) }
        }
    }

    private func work() {
        while true {
            queued.wait()
            let job = state.withLock { $0.jobs.removeFirst() }
            job()
        }
    }
}
