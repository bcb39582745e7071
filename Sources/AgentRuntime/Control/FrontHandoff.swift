import AgentCommands
import Foundation

/// The fronts a starting thread has started and the loop has not taken yet, and whether the
/// fronts are closed: under one lock, so that a front is either taken by the loop, stopped by
/// ``ControlFronts/close()`` or stopped by the thread that started it — never left listening.
final class FrontHandoff: @unchecked Sendable {
    private let lock = NSLock()
    private var closed = false
    private var pending: [any AgentFront] = []

    var isClosed: Bool { lock.withLock { closed } }

    /// Starts `front` unless the fronts are closed (false); one that finishes starting after
    /// they closed is stopped here.
    func start(_ front: any AgentFront) throws -> Bool {
        guard !isClosed else { return false }
        try front.start()
        let keep = lock.withLock {
            if !closed { pending.append(front) }
            return !closed
        }
        if !keep { front.stop() }
        return keep
    }

    /// What was started and not taken yet.
    func takeStarted() -> [any AgentFront] {
        lock.withLock {
            defer { pending = [] }
            return pending
        }
    }

    /// Closes: returns what was started and not taken yet, for the caller to stop.
    func close() -> [any AgentFront] {
        lock.withLock {
            closed = true
            defer { pending = [] }
            return pending
        }
    }
}
