import CAgentSystem
import Foundation
import Synchronization

/// A task executor of one thread of its own, which runs its jobs in the order they came.
package final class ThreadTaskExecutor: TaskExecutor, Sendable {
    private let jobs = Mutex<[UnownedJob]>([])
    private let queued = DispatchSemaphore(value: 0)

    /// `name`: the thread's, as `ps -L` and /proc show it (15 bytes at most).
    package init(name: String) {
        // Named by the thread itself through pthread: Foundation's name did not always reach
        // the kernel (the thread kept its creator's, an event loop's).
        Thread { [self] in
            agent_set_thread_name(name)
            work()
        }.start()
    }

    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        jobs.withLock { $0.append(job) }
        queued.signal()
    }

    private func work() {
        while true {
            queued.wait()
            let job = jobs.withLock { $0.removeFirst() }
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}
