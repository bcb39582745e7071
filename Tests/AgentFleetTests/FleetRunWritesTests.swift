#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// How often the fleet's shared queue writes a run's row, counted by a trigger the test puts
/// on `task_runs` (each write is WAL, index entries and a share of a commit's fsync: what
/// bounds issue 26's figure 13), and that a claim takes the queue's first runs however long
/// the queue.
@Suite(.ownThreads, .serialized) struct FleetRunWritesTests {
    /// Counts every UPDATE of a run's row from now on, by run id.
    static func countUpdates(_ server: PostgresTestServer, database: String) throws {
        try server.sql(database: database, """
            CREATE TABLE test_run_updates (id text NOT NULL);
            CREATE FUNCTION test_count_run_update() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN INSERT INTO test_run_updates VALUES (NEW.id); RETURN NULL; END $$;
            CREATE TRIGGER test_run_updated AFTER UPDATE ON task_runs FOR EACH ROW EXECUTE FUNCTION test_count_run_update();
            """)
    }

    /// The UPDATEs counted so far, by run id.
    static func updates(_ server: PostgresTestServer, database: String) throws -> [String: Int] {
        var counts: [String: Int] = [:]
        for line in try server.sql(database: database, "SELECT id, count(*) FROM test_run_updates GROUP BY id").split(separator: "\n") {
            let parts = line.split(separator: "|")
            if parts.count == 2, let count = Int(parts[1].trimmingCharacters(in: .whitespaces)) { counts[String(parts[0])] = count }
        }
        return counts
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aClaimWritesEachClaimedRunOnceAndTakesTheQueuesFirstBehindALongQueue() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database), logger: Logger(label: "test"))
        let now = Date().timeIntervalSince1970
        // 500 waiting, then one critical run queued last, and one of another task.
        var queued = (0..<500).map { TaskRun(id: String(format: "n%03d", $0), task: "t", requestedBy: .cli, queuedAt: now) }
        queued.append(TaskRun(id: "urgent", task: "t", priority: .critical, requestedBy: .cli, queuedAt: now))
        queued.append(TaskRun(id: "elsewhere", task: "other", requestedBy: .cli, queuedAt: now))
        try await store.runs.queue(queued)
        try Self.countUpdates(server, database: database)

        let claimed = try await store.runs.claim(ClaimRequest(holder: "a", room: ["t": 4], lease: StoreContract.held))
        #expect(claimed.map(\.id) == ["urgent", "n000", "n001", "n002"], "the queue's order: priority first, then arrival")
        #expect(claimed.allSatisfy { $0.status == .running && $0.attempt == 1 && $0.claim?.holder == "a" && $0.startedAt != nil })
        #expect(try Self.updates(server, database: database) == Dictionary(uniqueKeysWithValues: claimed.map { ($0.id, 1) }),
                "each claimed run's row is written once by its claim, and no other row")
        let stored = try #require(try await store.runs.run(id: "urgent"))
        #expect(stored.status == .running && stored.attempt == 1 && stored.startedAt == claimed.first?.startedAt,
                "the one write carries the claimed record: \(stored.storedJSON.serialized())")

        // The next claim goes on from there (the claimed ones are not taken again).
        let next = try await store.runs.claim(ClaimRequest(holder: "b", room: ["t": 2], lease: StoreContract.held))
        #expect(next.map(\.id) == ["n003", "n004"])
        await store.shutDown()
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aSharedQueueRunIsWrittenWhenClaimedAndWhenItEndsOnly() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        // The schema first (the agent would make it), then the count, then the agent.
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "reader"),
                                                         logger: Logger(label: "test"))
        try Self.countUpdates(server, database: database)
        let folder = TestPaths.temporaryDirectory("fleet-writes")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        // A long lease: no renewal (a write of its own) while the runs go.
        let (agent, port) = try FleetEndToEndTests.agent("host-a", database: database, log: folder + "/runs.log", sleep: 0.05, lease: 120)
        defer { _ = agent.stop() }

        var ids: [String] = []
        for _ in 0..<4 { ids.append(try FleetEndToEndTests.submit(port: port)) }
        var runs: [TaskRun] = []
        let deadline = Date().addingTimeInterval(90)
        while Date() < deadline {
            runs = try await store.runs.list(RunFilter(task: "work", limit: 100)).map(\.run)
            if runs.count == 4, runs.allSatisfy({ $0.status == .succeeded }) { break }
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(runs.count == 4 && runs.allSatisfy { $0.status == .succeeded }, "the runs end: \(runs.map { "\($0.id) \($0.status.rawValue)" })\n\(agent.transcript)")
        #expect(runs.allSatisfy { $0.attempt == 1 && $0.startedAt != nil && $0.endedAt != nil })
        // Queued by an INSERT (not counted), then claimed (running, its attempt, started_at)
        // and ended: two writes; the start is not written again after the claim.
        #expect(try Self.updates(server, database: database) == Dictionary(uniqueKeysWithValues: ids.map { ($0, 2) }))
        await store.shutDown()
    }
}
#endif
