import Synchronization

/// The bound on open `?follow` streams: each holds a connection and polls the command layer,
/// so their number is limited (more get 503), and all of them end when the front stops.
final class StreamSlots: Sendable {
    /// One open stream's place; given back when the stream (or a response never sent) is gone.
    final class Slot: Sendable {
        private let slots: StreamSlots
        fileprivate init(_ slots: StreamSlots) { self.slots = slots }
        deinit { slots.release() }
    }

    let limit: Int
    private let state = Mutex<(open: Int, closed: Bool)>((0, false))

    init(limit: Int) { self.limit = limit }

    /// A place for one more stream, or nil when `limit` are open or the front is stopping.
    func acquire() -> Slot? {
        let granted = state.withLock { state in
            guard !state.closed, state.open < limit else { return false }
            state.open += 1
            return true
        }
        return granted ? Slot(self) : nil
    }

    fileprivate func release() { state.withLock { $0.open -= 1 } }

    /// Streams open now.
    var open: Int { state.withLock { $0.open } }

    /// Whether the front is stopping: every stream ends at its next poll.
    var isClosed: Bool { state.withLock { $0.closed } }

    /// Ends every stream and refuses new ones.
    func close() { state.withLock { $0.closed = true } }
}
