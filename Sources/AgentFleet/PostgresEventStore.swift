#if Fleet
import AgentWork
import Foundation
import Logging
import PostgresNIO

/// The fleet's events in PostgreSQL (table `fleet_events`, cursors in `fleet_event_cursors`).
///
/// Publishing hands an event to this store's own writer (one transaction per batch, in the
/// order handed over), so that the loop never waits and runs' writes never wait behind
/// events. Writers insert under one advisory lock: the order of `seq` is the order of commits,
/// so a reader that has seen seq N will never find a smaller one later, and one cursor per
/// subscriber is enough. Each insert NOTIFYs `agent_events` (a hint; subscribers poll too).
public final class PostgresEventStore: FleetEventStore, @unchecked Sendable {
    let store: FleetWriter

    private let lock = NSLock()
    private var pending: [FleetEvent] = []
    private var pendingCursors: [String: Int64] = [:]
    private var writing = false
    private var closed = false
    private var wake: CheckedContinuation<Void, Never>?
    private var flushWaiters: [CheckedContinuation<Void, Never>] = []
    private var counts = FleetEventFigures()
    private var writer: Task<Void, Never>?

    /// The advisory lock that orders the fleet's events (see the type's comment).
    static let orderLock = 2026112602
    /// Events written in one transaction at most.
    static let batchLimit = 1_000
    private static let now = PostgresMigrations.now

    init(store: FleetWriter) { self.store = store }

    private var client: PostgresClient { store.client }
    private var logger: Logger { store.logger }
    private var settings: FleetSettings { store.settings }

    func start() {
        writer = Task { [weak self] in await self?.writeLoop() }
    }

    /// Ends the writer; what waits is not written.
    func stop() {
        lock.withLock {
            closed = true
            wake?.resume()
            wake = nil
        }
        writer?.cancel()
    }

    // MARK: FleetEventStore

    package func publish(_ event: FleetEvent) {
        lock.withLock {
            if pending.count >= settings.backlogLimit {
                let excess = max(1, settings.backlogLimit / 10)
                pending.removeFirst(min(excess, pending.count))
                counts.dropped += excess
            }
            pending.append(event)
            wake?.resume()
            wake = nil
        }
    }

    package func record(cursor: Int64, of subscriber: String) {
        lock.withLock {
            pendingCursors[subscriber] = max(cursor, pendingCursors[subscriber] ?? cursor)
            wake?.resume()
            wake = nil
        }
    }

    package func cursor(of subscriber: String) async throws -> Int64 {
        try await client.withTransaction(logger: logger) { connection in
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

    package func events(types: [String], after cursor: Int64, limit: Int) async throws -> [FleetEvent] {
        guard !types.isEmpty, limit > 0 else { return [] }
        let rows = try await client.query("""
            SELECT seq, agent_id, source, type, time, payload FROM fleet_events
            WHERE type = ANY(\(types)::text[]) AND seq > \(cursor) ORDER BY seq LIMIT \(limit)
            """, logger: logger)
        var events: [FleetEvent] = []
        for try await (seq, agent, source, type, time, payload) in rows.decode((Int64, String, String, String, Int64, String).self) {
            events.append(FleetEvent(seq: seq, agentID: agent, source: source, type: type, timeNanoseconds: time, payload: Array(payload.utf8)))
        }
        return events
    }

    package func listen(_ wake: @escaping @Sendable () -> Void) {
        store.listen(on: "agent_events", wake)
    }

    package func flush() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            lock.lock()
            if (pending.isEmpty && pendingCursors.isEmpty && !writing) || closed {
                lock.unlock()
                continuation.resume()
                return
            }
            flushWaiters.append(continuation)
            lock.unlock()
        }
    }

    package var figures: FleetEventFigures {
        lock.withLock {
            var copy = counts
            copy.backlog = pending.count
            return copy
        }
    }

    // MARK: The writer

    private func writeLoop() async {
        var lastPrune = 0.0
        while !Task.isCancelled {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                lock.lock()
                if closed || !pending.isEmpty || !pendingCursors.isEmpty {
                    lock.unlock()
                    continuation.resume()
                } else {
                    wake = continuation
                    lock.unlock()
                }
            }
            let (batch, cursors, stop) = lock.withLock { () -> ([FleetEvent], [String: Int64], Bool) in
                let batch = Array(pending.prefix(Self.batchLimit))
                pending.removeFirst(batch.count)
                let cursors = pendingCursors
                pendingCursors = [:]
                writing = true
                return (batch, cursors, closed)
            }
            if stop { break }
            do {
                try await write(batch, cursors)
                let recovered = lock.withLock { () -> String? in
                    counts.published += batch.count
                    defer { counts.failing = nil }
                    return counts.failing
                }
                if let recovered { logger.notice("fleet: events are written again (\(recovered) is over)") }
            } catch {
                let reason = FleetStoreError.describe(error)
                let first = lock.withLock { () -> Bool in
                    let first = counts.failing == nil
                    counts.failing = "cannot write events to \(settings.displayURL): \(reason)"
                    // In order, before what came meanwhile; bounded, the oldest dropped.
                    pending.insert(contentsOf: batch, at: 0)
                    if pending.count > settings.backlogLimit {
                        let excess = pending.count - settings.backlogLimit
                        pending.removeFirst(excess)
                        counts.dropped += excess
                    }
                    for (subscriber, seq) in cursors { pendingCursors[subscriber] = max(seq, pendingCursors[subscriber] ?? seq) }
                    return first
                }
                if first { logger.error("fleet: cannot write published events (\(reason)); they wait (at most \(settings.backlogLimit)) in order") }
                try? await Task.sleep(for: .seconds(1))
            }
            let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
                writing = false
                guard (pending.isEmpty && pendingCursors.isEmpty) || closed else { return [] }
                defer { flushWaiters = [] }
                return flushWaiters
            }
            for waiter in waiters { waiter.resume() }
            let now = Date().timeIntervalSince1970
            if now - lastPrune >= 60 {
                lastPrune = now
                await prune()
            }
        }
        let waiters = lock.withLock { () -> [CheckedContinuation<Void, Never>] in
            writing = false
            defer { flushWaiters = [] }
            return flushWaiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func write(_ batch: [FleetEvent], _ cursors: [String: Int64]) async throws {
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
    private func prune() async {
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
