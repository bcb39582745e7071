import NIOCore
import Synchronization

/// Runs the HTTP front's tasks (one per connection, and the handlers they call) on the NIO
/// event loop that does the connections' I/O, instead of Swift's global concurrent pool: a
/// request then no longer hops from the event loop to a pool thread and back (two thread
/// wake-ups per request on a 2-core machine). Handlers must not block: work that can take
/// long (store queries) asks for the global executor (see ``CommandCenter``).
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop
    /// Set when the front stops: from then on jobs go to the global pool, since a job given
    /// to an event loop that has shut down is dropped (NIO logs it), and its task never ends.
    private let closed = Atomic<Bool>(false)

    init(_ loop: any EventLoop) { self.loop = loop }

    func close() { closed.store(true, ordering: .releasing) }

    func enqueue(_ job: consuming ExecutorJob) {
        if closed.load(ordering: .acquiring) {
            globalConcurrentExecutor.enqueue(job)
            return
        }
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
