import NIOCore
import Synchronization

/// Runs the HTTP front's tasks (one per connection, and the handlers they call) on the NIO
/// event loop that does the connections' I/O, instead of Swift's global concurrent pool: a
/// request then no longer hops from the event loop to a pool thread and back (two thread
/// wake-ups per request on a 2-core machine). Handlers must not block: work that can take
/// long (store queries) asks for the global executor (see ``CommandCenter``).
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop
    /// Set when the front stops, before its event loop shuts down: from then on jobs go to the
    /// global pool, since a job given to an event loop that has shut down is dropped (NIO logs
    /// it), and its task never ends. Held while a job is handed to the loop, so that none is
    /// handed over between the check and the shutdown.
    private let closed = Mutex<Bool>(false)

    init(_ loop: any EventLoop) { self.loop = loop }

    func close() { closed.withLock { $0 = true } }

    /// Whether the front has stopped (work for its loop goes elsewhere).
    var isClosed: Bool { closed.withLock { $0 } }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        let handed = closed.withLock { closed -> Bool in
            guard !closed else { return false }
            loop.execute { job.runSynchronously(on: executor) }
            return true
        }
        if !handed { globalConcurrentExecutor.enqueue(job) }
    }
}
