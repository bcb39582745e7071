import CAgentSystem
import Dispatch
import Glibc
import Synchronization

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

    /// The refusal of a thread, with what to change.
    package struct Refusal: Error, CustomStringConvertible {
        /// The error number `pthread_create` returned (EAGAIN when short of threads).
        package let code: Int32
        package let name: String

        package var description: String {
            let reason = String(cString: strerror(code))
            guard code == EAGAIN else { return "the system refused the thread \(name) (\(reason))" }
            return "the system refused the thread \(name) (\(reason)): the agent's user runs as many processes and threads as it may "
                + "(`ulimit -u`, or the service's TasksMax); raise the limit or run fewer processes"
        }
    }

    /// Runs `body` on a new detached thread named `name`; the refusal, with what to change,
    /// when the system gives none (`body` then never runs).
    package static func run(_ name: String, _ body: @escaping @Sendable () -> Void) -> Refusal? {
        let made = start(name, body)
        return made == 0 ? nil : Refusal(code: made, name: name)
    }

    /// Starts a thread that runs `body` for as long as it needs, and waits until `body` hands a
    /// value back (an event loop the thread now runs, say); the refusal when the system gives no
    /// thread. For libraries that stop the process when they cannot start a thread of their own
    /// (SwiftNIO's event loops): they are given ours instead.
    package static func handingBack<T: Sendable>(_ name: String, _ body: @escaping @Sendable (_ handBack: @escaping @Sendable (T) -> Void) -> Void) -> Result<T, Refusal> {
        let handed = Mutex<T?>(nil)
        let ready = DispatchSemaphore(value: 0)
        let refused = run(name) {
            body { value in
                handed.withLock { $0 = value }
                ready.signal()
            }
        }
        if let refused { return .failure(refused) }
        ready.wait()
        // Handed back before the signal.
        return .success(handed.withLock { $0! })
    }
}
