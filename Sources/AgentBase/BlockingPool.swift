import AgentCore
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
        var jobs: [(id: Int, job: @Sendable () -> Void)] = []
        var threads = 0
        var lastID = 0
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

    /// Runs `job` on one of the pool's threads. False, `job` withdrawn, when the pool has no
    /// thread and the system refuses it one (`ulimit -u`, a service's `TasksMax`): the caller
    /// does the work itself rather than wait for a thread that never comes.
    @discardableResult
    package func submit(_ job: @escaping @Sendable () -> Void) -> Bool {
        let (id, startThread) = state.withLock { state -> (Int, Bool) in
            state.lastID += 1
            state.jobs.append((state.lastID, job))
            guard state.threads < width else { return (state.lastID, false) }
            state.threads += 1
            return (state.lastID, true)
        }
        if startThread, SystemThread.start(name, { [self] in work() }) != 0 {
            let stranded = state.withLock { state -> [(id: Int, job: @Sendable () -> Void)]? in
                state.threads -= 1
                // A thread of the pool still takes it.
                guard state.threads == 0 else { return nil }
                defer { state.jobs.removeAll() }
                return state.jobs
            }
            if let stranded {
                // No thread left to take them: the others' jobs, accepted already, run here.
                for other in stranded where other.id != id { other.job() }
                return false
            }
        }
        queued.signal()
        return true
    }

    /// Runs `body` on one of the pool's threads (on the caller's when the system refuses the
    /// pool a thread) and gives its result to the awaiting task, which holds no thread meanwhile.
    package func run<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            if !submit({ continuation.resume(returning: body()) }) { continuation.resume(returning: body()) }
        }
    }

    private func work() {
        while true {
            queued.wait()
            // A signal may outlive its job (run by a submitter that found no thread).
            guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst().job }) else { continue }
            job()
        }
    }
}
