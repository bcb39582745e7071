#if Fleet
import AgentFleet
import AgentSupervision
import AgentStoreConformance
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The fleet's store while its database is away (issue 26 item 5): what is handed over waits,
/// bounded by `backlog_limit`, the rest dropped and counted; the store says it is degraded; what
/// waited is written once the database is back.
@Suite(.ownThreads, .serialized) struct PostgresFleetStoreOutageTests {
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func runChangesWaitBoundedAndCountedWhileTheDatabaseIsAwayAndAreWrittenWhenItIsBack() async throws {
        // A server of its own: this test stops it.
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let json: JSONValue = ["postgres": .string(server.url(database: try server.makeDatabase())), "password": "${env:PGPASSWORD}",
                               "agent_id": "outage", "heartbeat": 0.2, "backlog_limit": 20]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        #expect(store.health.degraded == nil)

        try server.pause()
        // A first change: the writer takes it and waits for the database.
        store.runs.record(StoreContract.run("first"))
        let deadline = Date().addingTimeInterval(30)
        while store.health.degraded == nil, Date() < deadline { try await Task.sleep(for: .milliseconds(100)) }
        #expect(store.health.degraded != nil, "the store says the database is away")
        for index in 0..<50 { store.runs.record(StoreContract.run("r\(index)")) }
        // The writer (an actor) takes what was handed over a moment later: health says so then.
        let taken = Date().addingTimeInterval(30)
        while store.health.backlog + store.health.dropped < 51, Date() < taken { try await Task.sleep(for: .milliseconds(20)) }
        let away = store.health
        #expect(away.dropped > 0, "beyond the limit the oldest waiting changes are dropped, counted")
        #expect(away.backlog + away.dropped == 51, "every change either waits or is counted dropped: \(away)")
        #expect(away.backlog <= 20 + 1, "bounded: at most the limit waits, besides the batch being written: \(away)")

        try server.resume()
        let caughtUp = Date().addingTimeInterval(60)
        while store.health.backlog > 0 || store.health.degraded != nil, Date() < caughtUp { try await Task.sleep(for: .milliseconds(100)) }
        let back = store.health
        #expect(back.degraded == nil, "\(back)")
        #expect(back.backlog == 0)
        let stored = try await store.runs.list(RunFilter(limit: 100)).map(\.run.id)
        #expect(stored.count == 51 - back.dropped, "what waited is written, what was dropped is not: \(stored)")
        #expect(stored.contains("r49"), "the newest changes are kept")
        await store.shutDown()
    }

    /// A run that ended here while the database was away, its lease lapsing meanwhile, was
    /// claimed again by its own holder once the database was back — before the end waiting in
    /// the writer was written, which the new claim's fence then refused: it ran a second time.
    /// Here a trigger refuses the end's write (the claim writes other columns), for as long as
    /// the test needs.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func aRunWhoseEndWaitsInTheWriterIsNotClaimedAgainByItsHolder() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let json: JSONValue = ["postgres": .string(server.url(database: database)), "password": "${env:PGPASSWORD}",
                               "agent_id": "ended-away", "heartbeat": 0.2]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        store.runs.record(StoreContract.run("job"))
        await store.runs.flush()
        let held = try #require(try await store.runs.claim(ClaimRequest(holder: "ended-away", room: ["t": 1], lease: 0.5)).first)
        try server.sql(database: database, """
            CREATE FUNCTION hold_the_end() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN IF NEW.data LIKE '%the first attempt%' THEN RAISE EXCEPTION 'held for the test'; END IF; RETURN NEW; END $$;
            CREATE TRIGGER hold_the_end BEFORE UPDATE ON task_runs FOR EACH ROW EXECUTE FUNCTION hold_the_end();
            """)
        var done = held
        done.status = .succeeded
        done.output = ["by": "the first attempt"]
        done.endedAt = Date().timeIntervalSince1970
        store.runs.record(done)
        // The end is refused (and kept) while the lease lapses.
        let refused = Date().addingTimeInterval(60)
        while store.health.degraded == nil, Date() < refused { try await Task.sleep(for: .milliseconds(20)) }
        #expect(store.health.degraded != nil, "the end's write was not refused")
        try await Task.sleep(for: .seconds(1))
        let claimed = try await store.runs.claim(ClaimRequest(holder: "ended-away", room: ["t": 1], lease: StoreContract.held))
        #expect(claimed.isEmpty, "its holder claimed the run it had ended: \(claimed.map(\.id))")

        try server.sql(database: database, "DROP TRIGGER hold_the_end ON task_runs")
        let written = Date().addingTimeInterval(60)
        while (try? await store.runs.run(id: "job"))?.status != .succeeded, Date() < written { try await Task.sleep(for: .milliseconds(50)) }
        let stored = try #require(try await store.runs.run(id: "job"))
        #expect(stored.status == .succeeded && stored.attempt == 1 && stored.output == ["by": "the first attempt"], "\(stored.storedJSON.serialized())")
        await store.shutDown()
    }

    /// A server that accepts and never answers (stopped, hung): the connections the pool holds
    /// stay open and a query on one would wait for ever. A user's read fails instead, at once
    /// once the store knows the database does not answer, and within the read deadline before.
    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func readsFailSayingWhyWhileTheServerNeverAnswersAndWorkWhenItAnswersAgain() async throws {
        let server = try PostgresTestServer.makePrivate()
        defer { server.stop() }
        let json: JSONValue = ["postgres": .string(server.url(database: try server.makeDatabase())), "password": "${env:PGPASSWORD}",
                               "agent_id": "stalled", "heartbeat": 0.2]
        let settings = try #require(try FleetSettings(json, environment: ["PGPASSWORD": PostgresTestServer.password]))
        let store = try await PostgresFleetStore.connect(settings, logger: Logger(label: "test"))
        store.runs.record(StoreContract.run("before"))
        await store.runs.flush()
        #expect(try await store.runs.run(id: "before") != nil)

        let postmaster = try #require(pid_t(try String(contentsOfFile: server.folder + "/data/postmaster.pid", encoding: .utf8)
            .split(separator: "\n").first.map(String.init) ?? ""))
        var unbounded = Int.max
        let stopped = [postmaster] + OrphanSweeper.children(of: postmaster, budget: &unbounded)
        for pid in stopped { kill(pid, SIGSTOP) }
        var continued = false
        defer { if !continued { for pid in stopped { kill(pid, SIGCONT) } } }

        // A change the writer hands over and waits for (heartbeats, in an agent, wait so too).
        store.runs.record(StoreContract.run("during"))
        // A lookup is not refused while degraded (the agent's own work makes it too): it waits
        // for the deadline.
        let lookup = await Result { try await store.runs.run(id: "before") }
        #expect(Self.message(lookup).contains("did not answer the read"), "\(lookup)")
        // By now the writer's wait says the database does not answer: a listing is refused at once.
        let listing = await Result { try await store.runs.list(RunFilter(limit: 10)) }
        #expect(Self.message(listing).contains("cannot be read now") && Self.message(listing).contains("no answer from"), "\(listing)")

        for pid in stopped { kill(pid, SIGCONT) }
        continued = true
        let deadline = Date().addingTimeInterval(60)
        var after: Result<RunListPage<TaskRun>, any Error>
        repeat {
            after = await Result { try await store.runs.list(RunFilter(limit: 10)) }
            if (try? after.get())?.count == 2 { break }
            try await Task.sleep(for: .milliseconds(100))
        } while Date() < deadline
        #expect((try? after.get())?.map(\.run.id) == ["during", "before"], "what waited is written too: \(after)")
        await store.shutDown()
    }

    static func message<T>(_ result: Result<T, any Error>) -> String {
        if case .failure(let error) = result { return "\(error)" }
        return "succeeded"
    }
}
#endif
