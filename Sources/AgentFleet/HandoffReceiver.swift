#if Fleet
/// An actor that takes what a ``Handoff`` brings, beside a writer task of its own: the shape
/// of ``FleetWriter`` and of each PostgreSQL store that writes what the loop hands over.
///
/// ``start()`` runs the receiver and the writer; ``stop()`` ends the hand-over: what was
/// handed over before is taken, ``handoffEnded()`` runs, and the writer is cancelled (lest a
/// write wait for a database that is away).
protocol HandoffReceiver: Actor {
    associatedtype Item: Sendable
    /// What the loop hands over, in its order.
    nonisolated var handoff: Handoff<Item> { get }
    /// Takes one item handed over (and wakes the writer if it has to write it).
    func take(_ item: Item)
    /// The hand-over has ended: mark the writer closed, wake it, answer whoever waits.
    func handoffEnded()
    /// Writes what was taken, until cancelled or closed.
    func writeLoop() async
    /// What the writer waits for before its first write (nil: nothing): the fleet joined.
    nonisolated var joinGate: FleetJoin? { get }
}

extension HandoffReceiver {
    /// Starts taking what is handed over, and the writer, until ``stop()``.
    nonisolated func start() {
        Task { await self.receive() }
    }

    /// Ends the hand-over (see the protocol's comment).
    nonisolated func stop() { handoff.finish() }

    nonisolated var joinGate: FleetJoin? { nil }

    /// Items handed over and not yet done (for a counting hand-over).
    nonisolated var backlog: Int { handoff.backlog }

    private func receive() async {
        let gate = joinGate
        let writer = Task {
            // Until the fleet is joined what is taken waits (bounded as while the database is away).
            await gate?.wait()
            await self.writeLoop()
        }
        await handoff.receive { take($0) }
        handoffEnded()
        writer.cancel()
    }
}
#endif
