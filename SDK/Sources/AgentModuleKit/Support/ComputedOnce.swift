import Synchronization

/// A value made at its first use and kept for the life of the process. A type's settings
/// schema is read by reflection; kept so, it is read once — in a zygote's warm-up, once for
/// every worker forked from it.
final class ComputedOnce<Value: Sendable>: Sendable {
    private let make: @Sendable () -> Value
    private let stored = Mutex<Value?>(nil)

    init(_ make: @escaping @Sendable () -> Value) {
        self.make = make
    }

    var value: Value {
        stored.withLock { stored in
            if let value = stored { return value }
            let value = make()
            stored = value
            return value
        }
    }
}
