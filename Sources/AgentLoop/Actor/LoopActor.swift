/// The isolation of everything the supervisor's epoll loop owns: state marked `@LoopActor`
/// is read and written on a loop thread only, and the compiler holds code elsewhere to an
/// `await` (or a post to the loop) to reach it.
///
/// Its executor is ``LoopExecutor``: a job runs on the thread that drives the loop, between
/// the loop's epoll callbacks, never on Swift's cooperative pool. Code that already runs on the
/// loop thread (an epoll callback, a timer, something posted to the inbox) enters the actor
/// with ``assumeIsolated(_:file:line:)``, which checks the thread and does not hop.
///
/// One executor, several loops: see ``LoopExecutor`` for how a process with more than one
/// ``EventLoop`` (the tests) is served.
@globalActor
public actor LoopActor {
    public static let shared = LoopActor()

    private init() {}

    public nonisolated var unownedExecutor: UnownedSerialExecutor {
        LoopExecutor.shared.asUnownedSerialExecutor()
    }

    public static var sharedUnownedExecutor: UnownedSerialExecutor {
        LoopExecutor.shared.asUnownedSerialExecutor()
    }

    /// Runs `operation` isolated to the loop, synchronously, on this thread — which must be
    /// driving an ``EventLoop`` (otherwise the process stops with a message naming the caller).
    /// For code the loop calls that the compiler cannot see is on it: epoll callbacks, timers,
    /// work posted to the inbox. No hop, no allocation: one thread-local read.
    @discardableResult
    public static func assumeIsolated<T>(
        _ operation: @LoopActor () throws -> T, file: StaticString = #fileID, line: UInt = #line
    ) rethrows -> T {
        typealias Isolated = @LoopActor () throws -> T
        typealias Plain = () throws -> T
        guard LoopExecutor.isLoopThread else {
            fatalError("LoopActor.assumeIsolated outside a loop thread", file: file, line: line)
        }
        // The same bit cast as `MainActor.assumeIsolated`: the check above is what makes it safe.
        return try withoutActuallyEscaping(operation) { operation in
            try unsafeBitCast(operation, to: Plain.self)()
        }
    }

    /// Whether this thread drives an ``EventLoop`` (so ``assumeIsolated(_:file:line:)`` holds).
    public nonisolated static var isOnLoopThread: Bool { LoopExecutor.isLoopThread }
}
