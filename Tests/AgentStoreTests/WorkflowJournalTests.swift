@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import GRDB
import JSONSchema
import Testing

/// A workflow change the store could not write (a step's end on a full disk) is kept in the
/// run journal beside the task runs' and written at the next open over an older state only:
/// a signal answered while the disk was full no longer leaves its step waiting for good after a
/// kill (DiskFullTests drives that end to end).
@Suite(.ownThreads, .serialized) struct WorkflowJournalTests {
    static func run(_ id: String, _ status: WorkflowRun.Status, revision: Int, variables: JSONObject = [:]) -> WorkflowRun {
        var run = WorkflowRun(stored: ["id": .string(id), "workflow": "flow", "version": "v1", "definition": ["steps": []],
                                       "input": ["ticket": 7], "status": .string(status.rawValue), "started_at": 1_700_000_000])!
        run.variables = variables
        run.revision = revision
        return run
    }

    static func step(_ run: String, _ id: String, attempt: Int, _ status: WorkflowStepRecord.Status) -> WorkflowStepRecord {
        WorkflowStepRecord(runID: run, stepID: id, kind: "wait_signal", generation: 1, attempt: attempt, status: status, startedAt: 1_700_000_001)
    }

    /// The line the journal appends for the change.
    static func change(_ seq: UInt64, runs: [WorkflowRun] = [], steps: [WorkflowStepRecord] = []) -> String {
        String(decoding: RunJournal.line(seq, WorkflowCommit(runs: runs, steps: steps)), as: UTF8.self)
    }

    /// Writes `commit` to a store in `folder`, closed again: the store's mark.
    static func written(_ commit: WorkflowCommit, in folder: String) throws -> UInt64 {
        let store = try RunJournalTests.store(folder)
        let done = DispatchSemaphore(value: 0)
        try SQLiteWorkflowStore(store: store).commit(commit) { _ in done.signal() }
        RunJournalTests.waitWritten(store)
        #expect(done.wait(timeout: .now() + 120) == .success)
        store.close()
        return try RunJournalTests.mark(at: folder + "/agent.sqlite")
    }

    @Test func aWorkflowChangeInTheJournalIsWrittenOverAnOlderStateOnly() throws {
        let folder = TestPaths.temporaryDirectory("workflow-journal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let mark = try Self.written(WorkflowCommit(runs: [Self.run("waiting", .waiting, revision: 1), Self.run("ended", .succeeded, revision: 1),
                                                          Self.run("retried", .running, revision: 1), Self.run("stale", .running, revision: 3, variables: ["v": 3])],
                                                   steps: [Self.step("waiting", "go", attempt: 1, .waiting), Self.step("ended", "go", attempt: 1, .succeeded),
                                                           Self.step("retried", "go", attempt: 2, .running), Self.step("stale", "go", attempt: 1, .succeeded)]),
                                    in: folder)
        // "waiting" got its signal (its step ended, the run went on); "ended" finished before its
        // line; "retried" is at a later attempt than its line; "stale" went on past its line (a
        // line the store gave up, left in a pinned journal); "gone" the store lacks.
        let text = Self.change(mark + 1, runs: [Self.run("waiting", .running, revision: 2, variables: ["n": 1])], steps: [Self.step("waiting", "go", attempt: 1, .succeeded)])
            + Self.change(mark + 2, runs: [Self.run("ended", .running, revision: 2)], steps: [Self.step("ended", "go", attempt: 1, .running)])
            + Self.change(mark + 3, steps: [Self.step("retried", "go", attempt: 1, .succeeded), Self.step("retried", "next", attempt: 1, .running)])
            + Self.change(mark + 4, runs: [Self.run("stale", .running, revision: 2, variables: ["v": 2])], steps: [Self.step("stale", "go", attempt: 1, .running)])
            + Self.change(mark + 5, runs: [Self.run("gone", .running, revision: 1)], steps: [Self.step("gone", "go", attempt: 1, .succeeded)])
        #expect(!text.contains("ticket"), "a line leaves the run's input out")
        #expect(FileManager.default.createFile(atPath: RunJournal.path(for: path), contents: Data(text.utf8)))
        let store = try RunJournalTests.store(folder)
        defer { store.close() }
        let reader = try AgentStore.readOnlyQueue(path: path)
        let waiting = try #require(try SQLiteWorkflowStore.run(id: "waiting", reader: reader))
        #expect(waiting.run.status == .running && waiting.run.variables == ["n": 1] && waiting.run.revision == 2)
        #expect(waiting.run.input == ["ticket": 7] && waiting.run.definition == ["steps": []], "the store's input and definition kept")
        #expect(waiting.steps.map(\.status) == [.succeeded], "the signal's step ended")
        let ended = try #require(try SQLiteWorkflowStore.run(id: "ended", reader: reader))
        #expect(ended.run.status == .succeeded && ended.steps.map(\.status) == [.succeeded], "a finished run was changed")
        let retried = try #require(try SQLiteWorkflowStore.run(id: "retried", reader: reader))
        #expect(retried.steps.map { "\($0.stepID) \($0.attempt) \($0.status.rawValue)" } == ["go 2 running", "next 1 running"],
                "an earlier attempt undid a later one, or a new step was not written")
        let stale = try #require(try SQLiteWorkflowStore.run(id: "stale", reader: reader))
        #expect(stale.run.variables == ["v": 3] && stale.steps.map(\.status) == [.succeeded], "an earlier revision undid a later one")
        #expect(try SQLiteWorkflowStore.run(id: "gone", reader: reader) == nil, "a change made a run the store did not have")
        #expect(try RunJournalTests.mark(at: path) == mark + 5)
    }

    /// A run an event started while the disk was full had its first record kept in the
    /// journal without its definition and input, so the next open could not make it, and the
    /// run was lost by a kill. Its lines now carry them until the store has written it.
    @Test func aWorkflowRunBegunOnAFullDiskIsMadeFromItsLines() throws {
        let folder = TestPaths.temporaryDirectory("workflow-journal-new")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        let mark = try Self.written(WorkflowCommit(runs: [Self.run("ended", .succeeded, revision: 1)]), in: folder)
        func unstored(_ seq: UInt64, _ run: WorkflowRun, steps: [WorkflowStepRecord] = []) -> String {
            String(decoding: RunJournal.line(seq, WorkflowCommit(runs: [run], steps: steps, unstored: [run.id])), as: UTF8.self)
        }
        // "begun": its first record, then a step's end and its next state. "ended" the store has
        // finished (a line with a definition does not make it again); "bare" has no definition.
        let text = unstored(mark + 1, Self.run("begun", .running, revision: 1), steps: [Self.step("begun", "go", attempt: 1, .running)])
            + Self.change(mark + 2, runs: [Self.run("begun", .running, revision: 2, variables: ["n": 2])], steps: [Self.step("begun", "go", attempt: 1, .succeeded)])
            + unstored(mark + 3, Self.run("ended", .running, revision: 2))
            + Self.change(mark + 4, runs: [Self.run("bare", .running, revision: 1)], steps: [Self.step("bare", "go", attempt: 1, .running)])
            // Begun and ended in one line: its step is judged against the run before the line.
            + unstored(mark + 5, Self.run("later", .succeeded, revision: 1), steps: [Self.step("later", "go", attempt: 1, .succeeded)])
        #expect(text.split(separator: "\n").map { $0.contains("ticket") } == [true, false, true, false, true],
                "the line of a run the store lacks carries its input, the others leave it out")
        #expect(FileManager.default.createFile(atPath: RunJournal.path(for: path), contents: Data(text.utf8)))

        // Beside the stopped agent, as the next open writes it.
        let beside = try StoreReader(path: path)
        let shown = try #require(try beside.workflowRun(id: "begun"))
        #expect(shown.run.revision == 2 && shown.run.variables == ["n": 2] && shown.steps.map(\.status) == [.succeeded])
        // Listed as the store lists: newest first, filtered, cut at the limit.
        #expect(try beside.workflowRuns(WorkflowRunFilter()).runs.map(\.run.id) == ["later", "begun", "ended"])
        #expect(try beside.workflowRuns(WorkflowRunFilter(status: .running)).runs.map(\.run.id) == ["begun"])
        #expect(try beside.workflowRuns(WorkflowRunFilter(workflow: "other")).runs.isEmpty)
        #expect(try beside.workflowRuns(WorkflowRunFilter(limit: 2)).runs.map(\.run.id) == ["later", "begun"])
        #expect(try beside.workflowRuns(WorkflowRunFilter()).runs.allSatisfy { $0.omitted.isEmpty })
        #expect(try beside.workflowRun(id: "later")?.steps.map(\.status) == [.succeeded])
        #expect(try beside.workflowRun(id: "bare") == nil)

        let store = try RunJournalTests.store(folder)
        defer { store.close() }
        let reader = try AgentStore.readOnlyQueue(path: path)
        let begun = try #require(try SQLiteWorkflowStore.run(id: "begun", reader: reader), "a run begun on a full disk was not made")
        #expect(begun.run.status == .running && begun.run.revision == 2 && begun.run.variables == ["n": 2])
        #expect(begun.run.input == ["ticket": 7] && begun.run.definition == ["steps": []], "its definition and input came from its first line")
        #expect(begun.steps.map { "\($0.stepID) \($0.status.rawValue)" } == ["go succeeded"])
        #expect(try SQLiteWorkflowStore.run(id: "ended", reader: reader)?.run.status == .succeeded, "a finished run was made again")
        #expect(try SQLiteWorkflowStore.run(id: "bare", reader: reader) == nil, "a run was made without its definition")
        let later = try SQLiteWorkflowStore.run(id: "later", reader: reader)
        #expect(later?.run.status == .succeeded && later?.steps.map(\.status) == [.succeeded], "\(String(describing: later))")
    }

    @Test func aJournalLineOfAWorkflowChangeIsReadBackWhole() throws {
        var run = Self.run("r", .running, revision: 4)
        let line = Self.change(7, runs: [run], steps: [Self.step("r", "go", attempt: 1, .succeeded)])
        let entry = try #require(RunJournal.entry(Array(line.utf8.dropLast())))
        #expect(entry.0 == 7)
        guard case .workflow(let commit) = entry.1 else { Issue.record("not read as a workflow change: \(entry.1)"); return }
        // The definition and input, left out, are the store's at the replay.
        run.definition = .null
        run.input = [:]
        #expect(commit.runs == [run] && commit.steps == [Self.step("r", "go", attempt: 1, .succeeded)])
        // A step that is not one: the line is not ours, not half applied.
        let broken = #"{"seq":8,"change":true,"workflow":{"runs":[],"steps":[{"run_id":"r"}]}}"#
        #expect(RunJournal.entry(Array(broken.utf8)) == nil)
    }

    @Test func keptWorkflowChangesTheJournalHoldsNeverGiveWay() {
        var kept = RetainedWrites(limit: 1)
        let commits = ["a", "b", "c"].map { WorkflowCommit(runs: [Self.run($0, .running, revision: 1)]) }
        #expect(kept.keep(runs: [], workflows: commits, journaled: [true, false, true]) == 1)
        #expect(kept.workflows.map { $0.runs[0].id } == ["a", "c"])
        #expect(kept.lost == 1)
    }
}
