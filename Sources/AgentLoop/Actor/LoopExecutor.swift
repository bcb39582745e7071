import Foundation
import Synchronization

/// The executor of ``LoopActor``: runs its jobs on a thread that drives an ``EventLoop``, in
/// that loop's inbox drain (the eventfd wakes the loop), never on Swift's cooperative pool.
///
/// A global actor has one executor per process, but a process may drive several loops: the
/// agent runs one, the tests create their own (a `Supervisor` each, or a bare `EventLoop()`
/// driven with `runOnce`), often at the same time. The executor is therefore bound to the loop
/// *of the thread*, not to one loop:
///
/// - A thread is a loop thread while it drives a loop (``EventLoop/runOnce(maxWait:)``, or
///   between ``EventLoop/enterThread()`` and ``EventLoop/leaveThread(_:)`` for a whole run); a
///   thread-local names the loop's inbox. `checkIsolated`/`isIsolatingCurrentContext` answer
///   from it, so an epoll callback of any loop may enter with ``LoopActor/assumeIsolated(_:file:line:)``.
/// - A job enqueued *on* a loop thread goes to that loop (it runs in the next drain, on the same
///   thread): `Task { @LoopActor in … }` started by loop code stays on its loop.
/// - A job enqueued from any other thread (an HTTP handler on a NIO thread, a continuation
///   resumed by the store's writer) goes to the **home loop**: the loop of the process's running
///   supervisor (``EventLoop/becomeHome()``; the last to become home wins, and resigning gives it
///   back to the one before). Jobs enqueued while there is none wait for the next home loop, as a
///   post to a loop that has not started yet waits for its first turn.
///
/// What the compiler proves is thus "on a loop thread". In the agent there is one loop, so that
/// is the actor's guarantee exactly. In a test process with several loops each loop owns its own
/// objects (nothing hands one to another loop), and code that reaches the actor from off the loop
/// threads (`Task { @LoopActor in }` from a pool thread, a resumption after `await`) is sent to the
/// home loop: tests that rely on such hops with more than one running supervisor must be
/// serialized. Work that knows its loop keeps naming it: ``LoopInbox/post(_:)`` goes to
/// exactly that loop, at the cost of one closure (no `Task`, no job).
public final class LoopExecutor: SerialExecutor {
    public static let shared = LoopExecutor()

    private init() {}

    public func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let run: LoopInbox.Work = { job.runSynchronously(on: LoopExecutor.shared.asUnownedSerialExecutor()) }
        if let inbox = Self.currentInbox {
            inbox.post(run)
            return
        }
        let home = Self.state.withLock { state -> LoopInbox? in
            guard let home = state.homes.last else {
                state.held.append(run)
                return nil
            }
            return home
        }
        home?.post(run)
    }

    public func asUnownedSerialExecutor() -> UnownedSerialExecutor {
        UnownedSerialExecutor(ordinary: self)
    }

    /// Asked by the runtime's isolation checks, which the compiler puts in `@LoopActor` closures
    /// handed to non-strict code (the standard library's `withUnsafeBytes`, `contains(where:)`):
    /// some run per event, so this is one thread-local read, no reference counting.
    public func isIsolatingCurrentContext() -> Bool? {
        Self.isLoopThread
    }

    public func checkIsolated() {
        precondition(Self.isLoopThread, "not on a loop thread: LoopActor state is touched from a thread that drives no EventLoop")
    }

    // MARK: The loop of this thread

    /// The inbox of the loop this thread drives (nil: none).
    package static var currentInbox: LoopInbox? {
        guard let raw = pthread_getspecific(threadKey) else { return nil }
        return Unmanaged<LoopInbox>.fromOpaque(raw).takeUnretainedValue()
    }

    /// Whether this thread drives a loop (no reference counting: asked per isolation check).
    package static var isLoopThread: Bool { pthread_getspecific(threadKey) != nil }

    /// Whether this thread drives the loop of `inbox` (no reference counting: the per-turn check).
    package static func isCurrent(_ inbox: LoopInbox) -> Bool {
        pthread_getspecific(threadKey) == Unmanaged.passUnretained(inbox).toOpaque()
    }

    /// Makes `inbox` this thread's loop; returns the one before (to give back with ``restore(_:)``).
    package static func enter(_ inbox: LoopInbox) -> UnsafeMutableRawPointer? {
        let outer = pthread_getspecific(threadKey)
        pthread_setspecific(threadKey, Unmanaged.passUnretained(inbox).toOpaque())
        return outer
    }

    package static func restore(_ outer: UnsafeMutableRawPointer?) {
        pthread_setspecific(threadKey, outer)
    }

    private static let threadKey: pthread_key_t = {
        var key = pthread_key_t()
        precondition(pthread_key_create(&key, nil) == 0, "pthread_key_create failed")
        return key
    }()

    // MARK: The home loop

    private static let state = Mutex<(homes: [LoopInbox], held: [LoopInbox.Work])>(([], []))

    /// Makes `inbox` the home loop (see the type's comment) and hands it the jobs that waited.
    package static func becomeHome(_ inbox: LoopInbox) {
        let held = state.withLock { state in
            state.homes.append(inbox)
            defer { state.held.removeAll() }
            return state.held
        }
        for job in held { inbox.post(job) }
    }

    /// Gives the home back to the loop that had it before `inbox`.
    package static func resignHome(_ inbox: LoopInbox) {
        state.withLock { state in
            if let index = state.homes.lastIndex(where: { $0 === inbox }) { state.homes.remove(at: index) }
        }
    }
}
