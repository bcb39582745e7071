import Synchronization

/// A value behind a lock that closures can share (a `Mutex` cannot be captured: it is not
/// copyable).
public final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        try mutex.withLock { try body(&$0) }
    }
}
