import Glibc

/// Starts a worker's own threads (``SystemThread``); a worker the system refuses one leaves,
/// saying why, and the supervisor restarts it with its backoff (it showed `running` for ever
/// with no reader, writer or process thread).
enum WorkerThread {
    /// Runs `body` on a new thread named `name`, with a stack of `stackSize` bytes (nil: the
    /// system's default); exits the worker (``WorkerMain/ExitCode/failure``) if it is refused.
    static func start(_ name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) {
        let refused = SystemThread.start(name, stackSize: stackSize, body)
        guard refused != 0 else { return }
        let line = "agent-worker: cannot start its \(name) thread: \(String(cString: strerror(refused))) "
            + "(the system's limit on this user's processes and threads: `ulimit -u`, or the service's TasksMax); the worker ends\n"
        _ = line.withCString { write(2, $0, strlen($0)) }
        _exit(WorkerMain.ExitCode.failure)
    }
}
