#if Fleet
import Synchronization

/// A hand-over from any thread to one actor, in order, that never waits: what the loop gives
/// the fleet's writers (``FleetWriter`` and the PostgreSQL stores, each a ``HandoffReceiver``).
///
/// An `AsyncStream` (a synchronous, ordered yield) made with the queue, and, when `counting`,
/// a count of the items handed over and not yet ``done(_:)`` for a writer's backlog, read from
/// any thread.
final class Handoff<Item: Sendable>: Sendable {
    private let items: AsyncStream<Item>
    private let inbox: AsyncStream<Item>.Continuation
    private let counting: Bool
    private let waiting = Atomic(0)

    /// `counting`: whether ``backlog`` counts the items handed over until ``done(_:)``.
    init(counting: Bool = false) {
        (items, inbox) = AsyncStream.makeStream(of: Item.self)
        self.counting = counting
    }

    /// Hands `item` over; false (the item not taken, nor counted) once the hand-over has ended.
    @discardableResult
    func yield(_ item: Item) -> Bool {
        if counting { waiting.add(1, ordering: .relaxed) }
        guard case .terminated = inbox.yield(item) else { return true }
        if counting { waiting.subtract(1, ordering: .relaxed) }
        return false
    }

    /// Ends the hand-over: what was handed over before is still taken, then ``receive(isolation:_:)`` returns.
    func finish() { inbox.finish() }

    /// Items handed over (when counting) and not yet done.
    var backlog: Int { waiting.load(ordering: .relaxed) }

    /// `count` items handed over are done with (written, refused or dropped).
    func done(_ count: Int = 1) {
        if counting { waiting.subtract(count, ordering: .relaxed) }
    }

    /// Calls `take` with each item, in order and on the caller's actor, until ``finish()``.
    func receive(isolation: isolated (any Actor)? = #isolation, _ take: (Item) -> Void) async {
        for await item in items { take(item) }
    }
}
#endif
