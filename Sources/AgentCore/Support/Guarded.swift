import Foundation

/// State reached only under a lock, with threads that wait for it to change: what `Mutex`
/// gives, plus a condition variable (which `Synchronization` has not). A type keeps its
/// mutable state in one and its other stored properties `let`, so that the compiler checks it
/// `Sendable` instead of taking its word for it.
public final class Guarded<State: Sendable>: @unchecked Sendable {
    // @unchecked: `state` is read and written only while `condition` is locked (the methods
    // below are the only ways to it).
    @usableFromInline let condition = NSCondition()
    @usableFromInline var state: State

    public init(_ state: State) { self.state = state }

    /// Runs `body` with the state, under the lock.
    @inlinable
    public func withLock<R>(_ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        return try body(&state)
    }

    /// Waits while `deadline` gives a date for the state (at most until that date;
    /// `Date.distantFuture`: as long as it takes), then runs `body` with the state, under the
    /// lock. The wait ends early at the date: `body` then finds the state as it is.
    @inlinable
    public func withLock<R>(waitingUntil deadline: (State) -> Date?, _ body: (inout State) throws -> R) rethrows -> R {
        condition.lock()
        defer { condition.unlock() }
        while let until = deadline(state), condition.wait(untilSaturated: until) {}
        return try body(&state)
    }

    /// Wakes one waiter (to be called after changing the state it waits on).
    @inlinable
    public func signal() { condition.signal() }

    /// Wakes every waiter.
    @inlinable
    public func broadcast() { condition.broadcast() }
}
