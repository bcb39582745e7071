import CAgentSystem
import Glibc

/// Starts a worker's own threads with `pthread_create`, which says when it cannot.
///
/// Foundation's `Thread.start()` says nothing when the system refuses a thread: short of
/// threads (the user's process limit, `ulimit -u`, or a service's `TasksMax`, which count
/// threads), workers showed `running` for ever with no reader, writer or process thread, doing
/// nothing. A worker that cannot start one of its threads leaves, saying why, and the
/// supervisor restarts it with its backoff.
enum WorkerThread {
    private final class Body: @unchecked Sendable {
        let name: String
        let run: @Sendable () -> Void

        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Runs `body` on a new detached thread named `name` (at most 15 bytes shown), with a stack
    /// of `stackSize` bytes (nil: the system's default); exits the worker
    /// (``WorkerMain/ExitCode/failure``) if the system refuses it.
    static func start(_ name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let box = Unmanaged.passRetained(Body(name: name, run: body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        var thread = pthread_t()
        let made = pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            agent_set_thread_name(body.name)
            body.run()
            return nil
        }, box.toOpaque())
        guard made == 0 else {
            box.release()
            let line = "agent-worker: cannot start its \(name) thread: \(String(cString: strerror(made))) "
                + "(the system's limit on this user's processes and threads: `ulimit -u`, or the service's TasksMax); the worker ends\n"
            _ = line.withCString { write(2, $0, strlen($0)) }
            _exit(WorkerMain.ExitCode.failure)
        }
        pthread_detach(thread)
    }
}
