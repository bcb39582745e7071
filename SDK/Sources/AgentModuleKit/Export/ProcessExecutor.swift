import Foundation

/// Runs a process's task on the thread that called `run_process`, which would otherwise only
/// wait for it to end. When the task has nothing to run and waits for events, the thread
/// sleeps in the host (`wait_events`), where the supervisor's delivery wakes it directly: an
/// event reaches the module's code with one thread wakeup, where the host's notifier resuming
/// a task on the cooperative pool costs two (the host's reader thread, then a pool thread).
///
/// A task executor preference, so the process's own code and its child tasks run here, and
/// actors without an executor of their own run here for it; a detached task it starts runs
/// on the pool as before.
// @unchecked: the queue and the sleep state are guarded by `condition`.
final class ProcessExecutor: TaskExecutor, @unchecked Sendable {
    private enum Sleep { case awake, inHost, onCondition }

    private let host: HostBridge
    private let context: ProcessContext
    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []
    private var sleep = Sleep.awake
    private var finished = false
    /// Set once `run()` returned: a job enqueued after it (none of the process's own: its
    /// task ended) runs on a thread of its own rather than never.
    private var stopped = false

    /// Builds, in a zygote's warm-up, the type metadata a process's run looks up by mangled
    /// name (the job list's storage, the task's priority, the continuation a receive waits
    /// with): made once there, not in each worker.
    static func warmUp() {
        var jobs: [UnownedJob] = []
        jobs.reserveCapacity(1)
        _ = size(of: TaskPriority?.self) + size(of: CheckedContinuation<Void, Never>.self)
    }

    /// Not optimized: a specialization could fold a size the compiler came to know, and skip
    /// the lookup this is for.
    @_optimize(none) @inline(never) private static func size<T>(of type: T.Type) -> Int { MemoryLayout<T>.size }

    init(host: HostBridge, context: ProcessContext) {
        self.host = host
        self.context = context
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        if stopped {
            condition.unlock()
            let executor = asUnownedTaskExecutor()
            Thread.detachNewThread { job.runSynchronously(on: executor) }
            return
        }
        jobs.append(job)
        let sleeping = sleep
        // Told once: the sleeper takes every job when it wakes.
        sleep = .awake
        if sleeping == .onCondition { condition.signal() }
        condition.unlock()
        if sleeping == .inHost { host.wakeEventsWait() }
    }

    /// Ends `run()` once the jobs queued so far have run (called from the task's last job).
    func finish() {
        condition.lock()
        finished = true
        condition.signal()
        condition.unlock()
    }

    /// Runs the task's jobs on the calling thread until ``finish()``.
    func run() {
        var batch: [UnownedJob] = []
        condition.lock()
        while true {
            if !jobs.isEmpty {
                swap(&batch, &jobs)
                condition.unlock()
                for job in batch { job.runSynchronously(on: asUnownedTaskExecutor()) }
                batch.removeAll(keepingCapacity: true)
                condition.lock()
                continue
            }
            if finished { break }
            if context.receiveWaits {
                sleep = .inHost
                condition.unlock()
                let outcome = host.waitForEvents(timeoutMilliseconds: -1)
                condition.lock()
                sleep = .awake
                condition.unlock()
                // Resumes the receive: its job is queued here, on this thread, with no wakeup.
                if outcome != .woken { context.eventsArrived() }
                condition.lock()
            } else {
                sleep = .onCondition
                while sleep == .onCondition, !finished { condition.wait() }
                sleep = .awake
            }
        }
        stopped = true
        condition.unlock()
    }
}
