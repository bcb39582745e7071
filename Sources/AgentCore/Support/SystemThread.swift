import CAgentSystem
import Glibc

/// Starts a thread with `pthread_create`, which says when the system refuses one.
///
/// Foundation's `Thread.start()` says nothing when `pthread_create` fails: short of threads
/// (the user's process limit, `ulimit -u`, or a service's `TasksMax`, which count threads), a
/// worker showed `running` with no reader, writer or process thread, and a pool's work waited
/// for a thread that never came.
package enum SystemThread {
    private final class Body: Sendable {
        let name: String
        let run: @Sendable () -> Void

        init(name: String, run: @escaping @Sendable () -> Void) {
            self.name = name
            self.run = run
        }
    }

    /// Runs `body` on a new detached thread named `name` (at most 15 bytes shown), with a stack
    /// of `stackSize` bytes (nil: the system's default). Returns 0, or the error number of the
    /// refusal (`body` then never runs).
    package static func start(_ name: String, stackSize: Int? = nil, _ body: @escaping @Sendable () -> Void) -> Int32 {
        let box = Unmanaged.passRetained(Body(name: name, run: body))
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        defer { pthread_attr_destroy(&attributes) }
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        if let stackSize { pthread_attr_setstacksize(&attributes, stackSize) }
        var thread = pthread_t()
        let made = pthread_create(&thread, &attributes, { raw in
            let body = Unmanaged<Body>.fromOpaque(raw!).takeRetainedValue()
            agent_set_thread_name(body.name)
            body.run()
            return nil
        }, box.toOpaque())
        if made != 0 { box.release() }
        return made
    }
}
