import AgentWork
import Foundation
import JSONSchema
import Testing

/// Lists of runs on every store: a run's member longer than 4 KiB of JSON is left out of a
/// list and named in its `omitted`, while the run read by its id keeps everything. A store
/// itself leaves out what is over twice that (the SQLite store keeps a record for lists, the
/// PostgreSQL server measures the members): a list never carries a long member from the store.
extension StoreContract {
    package static let listing: [StoreCheck] = [
        StoreCheck("aListedTaskRunLeavesOutItsLongMembersAndNamesThemWhileTheRunByIdKeepsThem", aListedTaskRunLeavesOutItsLongMembersAndNamesThemWhileTheRunByIdKeepsThem),
        StoreCheck("aListedWorkflowRunLeavesOutItsLongMembersAndNamesThemButNotItsDefinition", aListedWorkflowRunLeavesOutItsLongMembersAndNamesThemButNotItsDefinition),
    ]

    /// The runs of `listed` as the list's answer shows them, by id.
    static func shown<Run>(_ listed: RunListPage<Run>, json: (Run) -> JSONValue) -> [String: JSONValue] {
        var byID: [String: JSONValue] = [:]
        for entry in listed {
            let value = RunListing.shown(json(entry.run), omitted: entry.omitted)
            if let id = value["id"]?.stringValue { byID[id] = value }
        }
        return byID
    }

    static func aListedTaskRunLeavesOutItsLongMembersAndNamesThemWhileTheRunByIdKeepsThem(_ stores: StoresUnderTest) async throws {
        let runs = stores.runs
        var big = Self.run("big", status: .failed)
        big.input = ["text": .string(String(repeating: "x", count: 100_000))]
        big.error = String(repeating: "e", count: 5_000)
        // {"s":"…"}: 8 bytes and the string's, 4096 in all: at the limit, kept.
        var edge = Self.run("edge")
        edge.input = ["s": .string(String(repeating: "y", count: RunListing.memberLimit - 8))]
        var over = Self.run("over")
        over.input = ["s": .string(String(repeating: "y", count: RunListing.memberLimit - 7))]
        for run in [big, edge, over] { runs.record(run) }
        await runs.flush()

        let listed = try await runs.list(RunFilter(limit: 10))
        let fromStore = try #require(listed.first { $0.run.id == "big" })
        #expect(fromStore.omitted == ["input"], "the store leaves out only what is over 8 KiB")
        let carried = fromStore.run.input == big.input
        #expect(!carried, "the long input never comes from the store for a list")
        #expect(fromStore.run.error == big.error)
        let shown = Self.shown(listed, json: \.json)
        #expect(shown.count == 3)
        let listedBig = try #require(shown["big"])
        #expect(listedBig["omitted"] == ["error", "input"])
        #expect(listedBig["input"] == nil)
        #expect(listedBig["error"] == nil)
        #expect(listedBig["output"] == ["partial": true], "a short member stays")
        #expect(listedBig["status"] == "failed")
        #expect(listedBig["exit_code"] == 3)
        #expect(listedBig["stderr_tail"] == "boom\n")
        #expect(shown["edge"]?["input"] == edge.input)
        #expect(shown["edge"]?["omitted"] == nil)
        #expect(shown["over"]?["input"] == nil)
        #expect(shown["over"]?["omitted"] == ["input"])

        let whole = try #require(try await runs.run(id: "big"))
        #expect(whole.input == big.input)
        #expect(whole.error == big.error)

        // Written again with short members, it is listed whole again.
        var shortened = big
        shortened.input = ["n": 1]
        shortened.error = "exit 3"
        runs.record(shortened)
        await runs.flush()
        let again = try #require(Self.shown(try await runs.list(RunFilter(limit: 10)), json: \.json)["big"])
        #expect(again["omitted"] == nil)
        #expect(again["input"] == ["n": 1])
        #expect(again["error"] == "exit 3")
    }

    static func aListedWorkflowRunLeavesOutItsLongMembersAndNamesThemButNotItsDefinition(_ stores: StoresUnderTest) async throws {
        let workflows = stores.workflows
        var big = Self.workflowRun("wbig", status: .succeeded)
        big.variables = ["long": .string(String(repeating: "v", count: 50_000))]
        big.output = ["short": true]
        // A definition longer than a list's limit: no list shows it, so it is never named.
        big.definition = ["steps": .array((0..<400).map { ["id": .string("step\($0)"), "set": ["vars": ["x": .number(JSONNumber($0))]]] })]
        let small = Self.workflowRun("wsmall")
        #expect(await Self.commit(workflows, WorkflowCommit(runs: [big, small])) == .written)

        let listed = try await workflows.list(WorkflowRunFilter())
        let fromStore = try #require(listed.first { $0.run.id == "wbig" })
        #expect(fromStore.omitted == ["variables"], "the definition is left out but never named")
        #expect(fromStore.run.variables.isEmpty)
        #expect(fromStore.run.definition == .null)
        let shown = Self.shown(listed, json: \.json)
        let listedBig = try #require(shown["wbig"])
        #expect(listedBig["omitted"] == ["variables"])
        #expect(listedBig["variables"] == nil)
        #expect(listedBig["input"] == ["n": "wbig"])
        #expect(listedBig["output"] == ["short": true])
        #expect(listedBig["status"] == "succeeded")
        #expect(shown["wsmall"]?["omitted"] == nil)
        #expect(shown["wsmall"]?["variables"] == [:])

        let whole = try #require(try await workflows.run(id: "wbig"))
        #expect(whole.run.variables == big.variables)
        #expect(whole.run.definition == big.definition)
    }
}
