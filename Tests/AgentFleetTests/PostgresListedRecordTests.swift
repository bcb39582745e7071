#if Fleet
import AgentFleet
import AgentStoreConformance
import AgentTestSupport
import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The fleet's record for lists (`listed`, migration 11): written with every record that has
/// a member over 8 KiB, by each way a run is written (a queued run, a plain change, a claimed
/// run's change, a workflow commit), and read by lists only while it is its record's; a row
/// without one (written before the migration) or with one an older agent left behind when it
/// rewrote the record is trimmed by the server, never sent whole.
@Suite(.ownThreads, .serialized) struct PostgresListedRecordTests {
    static let long = JSONValue.string(String(repeating: "x", count: 100_000))

    /// Whether the row `id` of `table` has a record for lists that is its record's.
    static func fresh(_ table: String, _ id: String, database: String) throws -> Bool {
        try PostgresTestServer.require().sql(database: database, """
            SELECT listed IS NOT NULL AND listed_for = octet_length(data) FROM \(table) WHERE id = '\(id)'
            """).trimmingCharacters(in: .whitespacesAndNewlines) == "t"
    }

    static func listedEntry(_ store: PostgresFleetStore, _ id: String) async throws -> ListedRun<TaskRun>? {
        try await store.runs.list(RunFilter(limit: 10)).first { $0.run.id == id }
    }

    @Test(.enabled(if: PostgresTestServer.unavailableReason == nil, "needs a PostgreSQL server: \(PostgresTestServer.unavailableReason ?? "")"))
    func everyWriteOfALongRunKeepsItsRecordForListsAndAListWithoutOneIsTrimmedByTheServer() async throws {
        let server = try PostgresTestServer.require()
        let database = try server.makeDatabase()
        let store = try await PostgresFleetStore.connect(try PostgresStoreConformanceTests.fleetSettings(database: database, agent: "a"),
                                                         logger: Logger(label: "test"))
        do {
            try await Self.check(store, server: server, database: database)
        } catch {
            await store.shutDown()
            throw error
        }
        await store.shutDown()
    }

    static func check(_ store: PostgresFleetStore, server: PostgresTestServer, database: String) async throws {
        // Queued (one statement for a batch), then claimed and finished under the claim.
        var queued = StoreContract.run("queued")
        queued.input = ["text": long]
        try await store.runs.queue([queued])
        #expect(try fresh("task_runs", "queued", database: database))
        var claimed = try #require(try await store.runs.claim(ClaimRequest(holder: "a", room: ["t": 1], lease: StoreContract.held)).first)
        claimed.status = .succeeded
        claimed.endedAt = Date().timeIntervalSince1970
        claimed.output = ["text": long]
        store.runs.record(claimed)
        await store.runs.flush()
        #expect(store.runs.refusedWrites == 0)
        #expect(try fresh("task_runs", "queued", database: database), "the claimed change wrote its record for lists")
        let finished = try #require(try await listedEntry(store, "queued"))
        #expect(finished.omitted == ["input", "output"])
        #expect(finished.run.status == .succeeded)

        // A plain change.
        var plain = StoreContract.run("plain", status: .failed)
        plain.error = String(repeating: "e", count: 10_000)
        store.runs.record(plain)
        await store.runs.flush()
        #expect(try fresh("task_runs", "plain", database: database))
        #expect(try await listedEntry(store, "plain")?.omitted == ["error"])

        // A row from before the migration: no record for lists; the server leaves the member out.
        try server.sql(database: database, "UPDATE task_runs SET listed = NULL, listed_for = NULL WHERE id = 'plain'")
        let unlisted = try #require(try await listedEntry(store, "plain"))
        #expect(unlisted.omitted == ["error"])
        #expect(unlisted.run.error == nil)
        #expect(unlisted.run.status == .failed)

        // An older agent rewrote the record and left the record for lists as it was: the list
        // reads the record (trimmed by the server), not the stale record for lists.
        store.runs.record(plain)
        await store.runs.flush()
        #expect(try fresh("task_runs", "plain", database: database))
        try server.sql(database: database, #"UPDATE task_runs SET data = replace(data, '"exit_code":3', '"exit_code":42') WHERE id = 'plain'"#)
        #expect(try !fresh("task_runs", "plain", database: database), "the rewrite changed the record's length")
        let rewritten = try #require(try await listedEntry(store, "plain"))
        #expect(rewritten.run.exitCode == 42)
        #expect(rewritten.omitted == ["error"])
        #expect(rewritten.run.error == nil)

        // A NUL character (written \u0000), which PostgreSQL refuses to unescape: in a long
        // record without a long member (its record is listed, nothing unescaped), and in a row
        // without a record for lists (the server cannot split it: the agent trims it). Beside
        // them, a long row that is no JSON (written by hand) is left out; the list answers.
        var nul = StoreContract.run("nul", status: .succeeded)
        nul.input = ["a": .string("\u{0000}" + String(repeating: "x", count: 5_000))]
        nul.output = ["b": .string(String(repeating: "y", count: 5_000))]
        var nulLong = StoreContract.run("nul-long", status: .succeeded)
        nulLong.input = ["a": .string("\u{0000}" + String(repeating: "x", count: 20_000))]
        store.runs.record(nul)
        store.runs.record(nulLong)
        store.runs.record(StoreContract.run("broken", status: .succeeded))
        await store.runs.flush()
        try server.sql(database: database, "UPDATE task_runs SET listed = NULL, listed_for = NULL WHERE id = 'nul-long'")
        try server.sql(database: database, "UPDATE task_runs SET data = data || repeat(' ', 10000) || 'x', listed_for = NULL WHERE id = 'broken'")
        let page = try await store.runs.list(RunFilter(limit: 10))
        #expect(Set(page.map(\.run.id)) == ["queued", "plain", "nul", "nul-long"])
        #expect(page.first { $0.run.id == "nul" }?.run.input == nul.input)
        let trimmed = try #require(page.first { $0.run.id == "nul-long" })
        let carried = trimmed.run.input == nulLong.input
        #expect(carried && trimmed.omitted.isEmpty, "the server sent the record it could not split whole")
        #expect(RunListing.shown(trimmed.run.json)["omitted"] == ["input"], "and the list shows it without its input")

        // A workflow commit.
        var workflow = StoreContract.workflowRun("w")
        workflow.variables = ["long": long]
        #expect(await StoreContract.commit(store.workflows, WorkflowCommit(runs: [workflow])) == .written)
        #expect(try fresh("workflow_runs", "w", database: database))
        try server.sql(database: database, "UPDATE workflow_runs SET listed = NULL, listed_for = NULL")
        let listedWorkflow = try #require(try await store.workflows.list(WorkflowRunFilter()).first)
        #expect(listedWorkflow.omitted == ["variables"])
        #expect(listedWorkflow.run.variables.isEmpty)
    }
}
#endif
