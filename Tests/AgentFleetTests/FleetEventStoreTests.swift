#if Fleet
import AgentFleet
import AgentTestSupport
@testable import AgentWork
import Foundation
import Logging
import Testing

/// The fleet's event store on a real PostgreSQL server: publishers at once, a reader following
/// with one cursor, types kept apart, cursors recorded. Events across hosts exist only in a
/// fleet, so there is no SQLite implementation to hold to the same checks.
@Suite(.ownThreads) struct FleetEventStoreTests {
    static func connect(_ database: String, agent: String) async throws -> PostgresFleetStore {
        try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: agent), logger: Logger(label: "test"))
    }

    static func event(_ agent: String, _ source: String, _ type: String, _ n: Int) -> FleetEvent {
        FleetEvent(agentID: agent, source: source, type: type, timeNanoseconds: Int64(n), payload: Array(#"{"n":\#(n)}"#.utf8))
    }

    static func number(_ event: FleetEvent) -> Int? {
        let text = String(decoding: event.payload, as: UTF8.self)
        return Int(text.dropFirst(5).dropLast())
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aReaderFollowingConcurrentPublishersGetsEveryEventOnceInEachSourcesOrder() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let a = try await Self.connect(database, agent: "host-a")
        let b = try await Self.connect(database, agent: "host-b")
        let reader = try await Self.connect(database, agent: "host-c")
        let start = try await reader.events.cursor(of: "host-c")
        #expect(start == 0)
        let perSource = 1_500
        // Four sources on two agents, handed over in small bursts so that their writers' transactions overlap.
        let publishing = Task {
            for n in 1...perSource {
                a.events.publish(Self.event("host-a", "s1", "alert", n))
                a.events.publish(Self.event("host-a", "s2", "alert", n))
                b.events.publish(Self.event("host-b", "s1", "alert", n))
                b.events.publish(Self.event("host-b", "s2", "alert", n))
                if n % 50 == 0 { try? await Task.sleep(for: .milliseconds(2)) }
            }
            await a.events.flush()
            await b.events.flush()
        }
        // The reader follows while they publish, with one cursor.
        var cursor = start
        var seen: [String: [Int]] = [:]
        let deadline = Date().addingTimeInterval(120)
        while seen.values.map(\.count).reduce(0, +) < 4 * perSource, Date() < deadline {
            let batch = try await reader.events.events(types: ["alert"], after: cursor, limit: 97)
            for event in batch {
                #expect(event.seq > cursor)
                cursor = event.seq
                seen[event.agentID + "/" + event.source, default: []].append(Self.number(event) ?? -1)
            }
            if batch.isEmpty { try await Task.sleep(for: .milliseconds(5)) }
        }
        await publishing.value
        #expect(try await reader.events.events(types: ["alert"], after: cursor, limit: 10).isEmpty, "nothing after the cursor was left behind")
        #expect(Set(seen.keys) == ["host-a/s1", "host-a/s2", "host-b/s1", "host-b/s2"])
        for (source, numbers) in seen {
            // Compared without printing 1,500 numbers: the first place where it differs.
            let differs = zip(numbers, 1...).first { $0 != $1 }.map { "event \($0.0) where \($0.1) was due" }
            #expect(numbers.count == perSource && differs == nil,
                    "\(source): every event once, in the order emitted; got \(numbers.count), first difference: \(differs ?? "none")")
        }
        #expect(a.events.figures.published == 2 * perSource && b.events.figures.published == 2 * perSource)
        await a.shutDown()
        await b.shutDown()
        await reader.shutDown()
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aNewSubscriberStartsAfterTheNewestEventAndItsRecordedCursorNeverGoesBack() async throws {
        let database = try PostgresTestServer.require().makeDatabase()
        let store = try await Self.connect(database, agent: "host-a")
        for n in 1...5 { store.events.publish(Self.event("host-a", "s", "alert", n)) }
        store.events.publish(Self.event("host-a", "s", "other", 6))
        await store.events.flush()
        // Only the types asked for.
        let alerts = try await store.events.events(types: ["alert"], after: 0, limit: 100)
        #expect(alerts.compactMap(Self.number) == [1, 2, 3, 4, 5])
        #expect(alerts.allSatisfy { $0.type == "alert" && $0.agentID == "host-a" && $0.source == "s" })
        #expect(try await store.events.events(types: ["nothing"], after: 0, limit: 100).isEmpty)
        let newest = try #require(try await store.events.events(types: ["alert", "other"], after: 0, limit: 100).last?.seq)

        // A subscriber that never read starts after the newest event, and keeps that place.
        #expect(try await store.events.cursor(of: "host-b") == newest)
        store.events.publish(Self.event("host-a", "s", "alert", 7))
        await store.events.flush()
        #expect(try await store.events.cursor(of: "host-b") == newest)
        let next = try await store.events.events(types: ["alert"], after: newest, limit: 100)
        #expect(next.compactMap(Self.number) == [7])

        // Recorded cursors move forward only.
        store.events.record(cursor: next[0].seq, of: "host-b")
        await store.events.flush()
        #expect(try await store.events.cursor(of: "host-b") == next[0].seq)
        store.events.record(cursor: 1, of: "host-b")
        await store.events.flush()
        #expect(try await store.events.cursor(of: "host-b") == next[0].seq)
        await store.shutDown()
    }

    /// `event_retention`: an agent deletes its own published events older than it (by the
    /// server's clock, at most once a minute after a write), never another agent's.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func eventsOlderThanTheRetentionAreDeletedByTheAgentThatPublishedThemOnly() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let a = try await Self.connect(database, agent: "host-a")
        let b = try await Self.connect(database, agent: "host-b")
        for n in 1...3 {
            a.events.publish(Self.event("host-a", "s", "alert", n))
            b.events.publish(Self.event("host-b", "s", "alert", n))
        }
        await a.events.flush()
        await b.events.flush()
        await a.shutDown()
        // Published eight days ago (the default retention is seven).
        try server.sql(database: database, "UPDATE fleet_events SET published = published - 8 * 86400")
        // A new writer of host-a (it has not pruned yet) publishes once: it prunes after writing.
        let again = try await Self.connect(database, agent: "host-a")
        again.events.publish(Self.event("host-a", "s", "alert", 4))
        await again.events.flush()
        func left() throws -> [String] {
            try server.sql(database: database, "SELECT agent_id || ':' || (payload::json->>'n') FROM fleet_events ORDER BY seq")
                .split(separator: "\n").map(String.init)
        }
        let deadline = Date().addingTimeInterval(60)
        while try left().contains("host-a:1"), Date() < deadline { try await Task.sleep(for: .milliseconds(50)) }
        #expect(try left() == ["host-b:1", "host-b:2", "host-b:3", "host-a:4"], "host-a's old events gone, its new one and host-b's kept")
        await again.shutDown()
        await b.shutDown()
    }
}
#endif
