#if Fleet
import AgentWork
import Foundation
import Logging
import PostgresNIO
import Synchronization

/// The fleet's events in PostgreSQL (table `fleet_events`, cursors in `fleet_event_cursors`).
///
/// An actor, like ``FleetWriter``: publishing hands an event over through a ``Handoff`` (a
/// synchronous, ordered yield) that the actor takes and writes, one transaction per batch in
/// the order handed over, so that the loop never waits and runs' writes never wait behind
/// events. Writers insert under one advisory lock: the order of `seq` is the order of commits,
/// so a reader that has seen seq N will never find a smaller one later, and one cursor per
/// subscriber is enough. Each insert NOTIFYs `agent_events` (a hint; subscribers poll too).
public actor PostgresEventStore: FleetEventStore, HandoffReceiver {
    nonisolated let store: FleetWriter
    nonisolated let handoff = Handoff<Item>()
    /// What ``figures`` reads from any thread: the actor publishes it after every change.
    private nonisolated let published = Mutex(FleetEventFigures())

    private var pending: [FleetEvent] = []
    private var pendingCursors: [String: Int64] = [:]
    private var writing = false
    private var closed = false
    private var wake: CheckedContinuation<Void, Never>?
    private var flushWaiters: [CheckedContinuation<Void, Never>] = []
    private var counts = FleetEventFigures()

    /// What the loop hands over, in its order.
    enum Item: Sendable {
        case event(FleetEvent)
        case cursor(Int64, subscriber: String)
        case flush(CheckedContinuation<Void, Never>)
    }

    /// The advisory lock that orders the fleet's events (see the type's comment).
    static let orderLock = 2026112602
    /// Events written in one transaction at most.
    static let batchLimit = 1_000
    private static let now = PostgresMigrations.now

    init(store: FleetWriter) {
        self.store = store
    }

    nonisolated var joinGate: FleetJoin? { store.join }

    private nonisolated var client: PostgresClient { store.client }
    private nonisolated var logger: Logger { store.logger }
    private nonisolated var settings: FleetSettings { store.settings }

    // MARK: FleetEventStore

    package nonisolated func publish(_ event: FleetEvent) { handoff.yield(.event(event)) }

    package nonisolated func record(cursor: Int64, of subscriber: String) { handoff.yield(.cursor(cursor, subscriber: subscriber)) }

    package nonisolated func cursor(of subscriber: String) async throws -> Int64 {
        try store.requireJoined()
        return try await client.withTransaction(logger: logger) { connection in
            try await connection.query("""
                INSERT INTO fleet_event_cursors (agent_id, seq, updated)
                VALUES (\(subscriber), (SELECT coalesce(max(seq), 0) FROM fleet_events), \(unescaped: Self.now))
                ON CONFLICT (agent_id) DO NOTHING
                """, logger: logger)
            let rows = try await connection.query("SELECT seq FROM fleet_event_cursors WHERE agent_id = \(subscriber)", logger: logger)
            for try await seq in rows.decode(Int64.self) { return seq }
            return 0
        }
    }

    package nonisolated func events(types: [String], after cursor: Int64, limit: Int) async throws -> [FleetEvent] {
        try store.requireJoined()
        guard !types.isEmpty, limit > 0 else { return [] }
        let rows = try await client.query("""
            SELECT seq, agent_id, source, type, time,
                CASE WHEN octet_length(payload) <= \(EventSettings.largestPayloadBytes) THEN payload ELSE '' END, octet_length(payload)
            FROM fleet_events
            WHERE type = ANY(\(types)::text[]) AND seq > \(cursor) ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        var events: [FleetEvent] = []
        // A payload past what any agent may publish is not read (a row of other hands: 50 MB
        // of one reached a subscriber's store and memory); the relay skips it, saying so.
        for try await (seq, agent, source, type, time, payload, bytes) in rows.decode((Int64, String, String, String, Int64, String, Int32).self) {
            var event = FleetEvent(seq: seq, agentID: agent, source: source, type: type, timeNanoseconds: time, payload: Array(payload.utf8))
            event.payloadBytes = Int(bytes)
            events.append(event)
        }
        return events
    }

    package nonisolated func listen(_ wake: @escaping @Sendable () -> Void) {
        store.listen(on: "agent_events", wake)
    }

    package nonisolated func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !handoff.yield(.flush(continuation)) { continuation.resume() }
        }
    }

    package nonisolated var figures: FleetEventFigures { published.withLock { $0 } }

    // MARK: The actor's side

    /// The hand-over has ended (``stop()``): what waits is not written.
    func handoffEnded() {
        closed = true
        resumeWriter()
        resumeFlushWaiters()
    }

    func take(_ item: Item) {
        switch item {
        case .event(let event):
            if pending.count >= settings.backlogLimit {
                let excess = max(1, settings.backlogLimit / 10)
                pending.removeFirst(min(excess, pending.count))
                counts.dropped += excess
            }
            pending.append(event)
            resumeWriter()
            publishFigures()
        case .cursor(let cursor, let subscriber):
            pendingCursors[subscriber] = max(cursor, pendingCursors[subscriber] ?? cursor)
            resumeWriter()
        case .flush(let waiter):
            if closed || (pending.isEmpty && pendingCursors.isEmpty && !writing) {
                waiter.resume()
            } else {
                flushWaiters.append(waiter)
            }
        }
    }

    private func resumeWriter() {
        wake?.resume()
        wake = nil
    }

    private func resumeFlushWaiters() {
        let waiters = flushWaiters
        flushWaiters = []
        for waiter in waiters { waiter.resume() }
    }

    private func publishFigures() {
        var copy = counts
        copy.backlog = pending.count
        published.withLock { $0 = copy }
    }

    // MARK: The writer

    func writeLoop() async {
        var lastPrune = 0.0
        while !Task.isCancelled, !closed {
            if pending.isEmpty, pendingCursors.isEmpty {
                await withCheckedContinuation { wake = $0 }
                continue
            }
            let batch = Array(pending.prefix(Self.batchLimit))
            pending.removeFirst(batch.count)
            let cursors = pendingCursors
            pendingCursors = [:]
            writing = true
            do {
                try await write(batch, cursors)
                counts.published += batch.count
                if let recovered = counts.failing { logger.notice("fleet: events are written again (\(recovered) is over)") }
                counts.failing = nil
            } catch {
                failed(batch, cursors, error: error)
                try? await Task.sleep(for: .seconds(1))
            }
            writing = false
            publishFigures()
            if pending.isEmpty, pendingCursors.isEmpty { resumeFlushWaiters() }
            let now = Date().timeIntervalSince1970
            if now - lastPrune >= 60 {
                lastPrune = now
                await prune()
            }
        }
        writing = false
        resumeFlushWaiters()
    }

    /// The batch waits for the database, in order, before what came meanwhile; bounded, the
    /// oldest dropped.
    private func failed(_ batch: [FleetEvent], _ cursors: [String: Int64], error: any Error) {
        let reason = FleetStoreError.describe(error)
        let first = counts.failing == nil
        counts.failing = "cannot write events to \(settings.displayURL): \(reason)"
        pending.insert(contentsOf: batch, at: 0)
        if pending.count > settings.backlogLimit {
            let excess = pending.count - settings.backlogLimit
            pending.removeFirst(excess)
            counts.dropped += excess
        }
        for (subscriber, seq) in cursors { pendingCursors[subscriber] = max(seq, pendingCursors[subscriber] ?? seq) }
        if first { logger.error("fleet: cannot write published events (\(reason)); they wait (at most \(settings.backlogLimit)) in order") }
    }

    private nonisolated func write(_ batch: [FleetEvent], _ cursors: [String: Int64]) async throws {
        try await client.withTransaction(logger: logger) { connection in
            for (subscriber, seq) in cursors.sorted(by: { $0.key < $1.key }) {
                try await connection.query("""
                    INSERT INTO fleet_event_cursors (agent_id, seq, updated) VALUES (\(subscriber), \(seq), \(unescaped: Self.now))
                    ON CONFLICT (agent_id) DO UPDATE SET seq = GREATEST(fleet_event_cursors.seq, EXCLUDED.seq), updated = EXCLUDED.updated
                    """, logger: logger)
            }
            guard !batch.isEmpty else { return }
            // Last: the lock is held until the commit, as briefly as can be.
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.orderLock))", logger: logger)
            let agents = batch.map(\.agentID), sources = batch.map(\.source), types = batch.map(\.type)
            let times = batch.map(\.timeNanoseconds), payloads = batch.map { String(decoding: $0.payload, as: UTF8.self) }
            try await connection.query("""
                INSERT INTO fleet_events (agent_id, source, type, time, published, payload)
                SELECT e.agent_id, e.source, e.type, e.time, \(unescaped: Self.now), e.payload
                FROM unnest(\(agents)::text[], \(sources)::text[], \(types)::text[], \(times)::bigint[], \(payloads)::text[])
                    WITH ORDINALITY AS e(agent_id, source, type, time, payload, n)
                ORDER BY e.n
                """, logger: logger)
        }
    }

    /// Deletes this agent's events older than the retention (each agent its own: no two
    /// agents delete the same rows).
    private nonisolated func prune() async {
        do {
            try await client.query("""
                DELETE FROM fleet_events WHERE agent_id = \(settings.agentID) AND published < \(unescaped: Self.now) - \(settings.eventRetention)
                """, logger: logger)
        } catch {
            logger.debug("fleet: pruning published events failed: \(FleetStoreError.describe(error))")
        }
    }
}
#endif
