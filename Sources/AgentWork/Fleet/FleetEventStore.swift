/// The fleet's events (issue 26 item 4): the event types an agent lists in `"publish"` go to
/// the shared database in the order each source emitted them; a monitor of any agent receives
/// them by subscribing to `fleet:TYPE`. The supervisor's loop never waits on it: events and
/// cursors are handed over and written by a writer, reads are `async`.
///
/// The guarantee is at least once from the moment an event is in the database: a subscriber
/// reads in the database's order (one order for all publishers, which keeps each source's),
/// records how far it got only after handing the events over, and resumes from what it
/// recorded after a restart, so an event may come twice, never be skipped.
package protocol FleetEventStore: AnyObject, Sendable {
    /// Hands an event over to be written after those handed over before (fire-and-forget;
    /// while the database is away at most the backlog limit wait, the oldest dropped, counted).
    func publish(_ event: FleetEvent)
    /// How far `subscriber` got: its recorded cursor, or the database's newest event when it
    /// has none (recorded so: it receives what is published from now on).
    func cursor(of subscriber: String) async throws -> Int64
    /// Records how far `subscriber` got (handed over; never moves a cursor back).
    func record(cursor: Int64, of subscriber: String)
    /// Events of `types` after `cursor`, in the fleet's order, at most `limit`.
    func events(types: [String], after cursor: Int64, limit: Int) async throws -> [FleetEvent]
    /// Calls `wake` (on any thread) when events may have been published: a hint only (NOTIFY).
    func listen(_ wake: @escaping @Sendable () -> Void)
    /// Returns once everything handed over before has been written (or dropped).
    func flush() async
    /// What was published, dropped and is waiting.
    var figures: FleetEventFigures { get }
}

/// One event of the fleet.
package struct FleetEvent: Sendable, Equatable {
    /// Its place in the fleet's order (the database's; 0 before it is written).
    package var seq: Int64
    /// The publishing agent (its `agent_id`).
    package var agentID: String
    /// The process (or `tasks`, `schedules`) that emitted it on that agent.
    package var source: String
    /// The type it was emitted with (without `fleet:`).
    package var type: String
    /// When it was emitted, in nanoseconds since 1970 (the publishing host's clock).
    package var timeNanoseconds: Int64
    /// Its JSON payload, as emitted (empty when it was not read: see ``payloadBytes``).
    package var payload: [UInt8]
    /// The payload's size in the database: larger than ``payload`` when it was too large to read
    /// (more than any agent may publish: a row written by other hands).
    package var payloadBytes = 0

    package init(seq: Int64 = 0, agentID: String, source: String, type: String, timeNanoseconds: Int64, payload: [UInt8]) {
        self.seq = seq
        self.agentID = agentID
        self.source = source
        self.type = type
        self.timeNanoseconds = timeNanoseconds
        self.payload = payload
    }

    /// The type a subscriber receives it as (`fleet:TYPE`).
    package var subscribedType: String { FleetSettings.subscriptionPrefix + type }
    /// The source a subscriber sees: `AGENT/SOURCE`.
    package var qualifiedSource: String { agentID + "/" + source }
}

/// What an agent's fleet event store has done.
package struct FleetEventFigures: Sendable, Equatable {
    /// Events written to the database since the start.
    package var published = 0
    /// Events dropped because the backlog was full while the database was away.
    package var dropped = 0
    /// Events waiting to be written.
    package var backlog = 0
    /// Why the last write failed, while it does.
    package var failing: String?

    package init() {}
}
