import AgentCore
import CAgentSystem
import Foundation
import Synchronization

/// A task executor of one thread of its own, which runs its jobs in the order they came. The
/// thread starts at the first job. While the system refuses it one (`ulimit -u`, a service's
/// TasksMax), jobs run on the concurrency pool instead, and the next job asks for it again:
/// started with Foundation's `Thread`, a refused thread went unnoticed and its jobs never ran.
package final class ThreadTaskExecutor: TaskExecutor, Sendable {
    private struct State {
        var jobs: [UnownedJob] = []
        var started = false
    }

    private let name: String
    private let state = Mutex(State())
    private let queued = DispatchSemaphore(value: 0)

    /// `name`: the thread's, as `ps -L` and /proc show it (15 bytes at most).
    package init(name: String) {
        self.name = name
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let start = state.withLock { state -> Bool in
            state.jobs.append(job)
            defer { state.started = true }
            return !state.started
        }
        if start, SystemThread.start(name, { [self] in work() }) != 0 {
            let waiting = state.withLock { state -> [UnownedJob] in
                state.started = false
                defer { state.jobs.removeAll() }
                return state.jobs
            }
            for job in waiting { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
            return
        }
        queued.signal()
    }

    private func work() {
        while true {
            queued.wait()
            // A signal may outlive its job (sent on to the pool while the thread was refused).
            guard let job = state.withLock({ $0.jobs.isEmpty ? nil : $0.jobs.removeFirst() }) else { continue }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
