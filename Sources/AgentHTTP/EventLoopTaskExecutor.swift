import NIOCore

/// Runs the HTTP front's tasks (one per connection, and the handlers they call) on the NIO
/// event loop that does the connections' I/O, instead of Swift's global concurrent pool: a
/// request then no longer hops from the event loop to a pool thread and back (two thread
/// wake-ups per request on a 2-core machine). Handlers must not block: work that can take
/// long (store queries) asks for the global executor (see ``CommandCenter``).
final class EventLoopTaskExecutor: TaskExecutor {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        loop.execute { job.runSynchronously(on: executor) }
    }
}
