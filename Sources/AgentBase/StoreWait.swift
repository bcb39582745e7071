import Foundation
import Synchronization

/// Awaits a store's `async` read from synchronous code that may block: the agent's start,
/// before the loop runs (never on the loop). The work runs as a task of its own; this thread
/// waits at most `timeout` seconds for it.
package enum StoreWait {
    package struct TimedOut: Error, CustomStringConvertible {
        package var seconds: Double
        package var description: String { "the store did not answer within \(seconds.compactText) s" }
    }

    package static func result<T: Sendable>(timeout: Double = 30, _ body: @escaping @Sendable () async throws -> T) throws -> T {
        let box = ResultBox<T>()
        let done = DispatchSemaphore(value: 0)
        // Ahead of the pool's queued work: a caller that blocks waits for this task alone (in
        // the test process, behind hundreds of queued test bodies, a read waited 30 s).
        Task.detached(priority: .high) {
            do { box.set(.success(try await body())) } catch { box.set(.failure(error)) }
            done.signal()
        }
        guard done.wait(timeout: .now() + timeout) == .success, let result = box.value else { throw TimedOut(seconds: timeout) }
        return try result.get()
    }

    private final class ResultBox<T: Sendable>: Sendable {
        private let stored = Mutex<Result<T, any Error>?>(nil)
        var value: Result<T, any Error>? { stored.withLock { $0 } }
        func set(_ value: Result<T, any Error>) { stored.withLock { $0 = value } }
    }
}

extension Result where Failure == any Error {
    /// The outcome of an `async` throwing body (a store's read, awaited off the loop).
    package init(awaiting body: () async throws -> Success) async {
        do { self = .success(try await body()) } catch { self = .failure(error) }
    }
}
