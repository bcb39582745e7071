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
    static func run(_ id: String, _ status: WorkflowRun.Status, variables: JSONObject = [:]) -> WorkflowRun {
        var run = WorkflowRun(stored: ["id": .string(id), "workflow": "flow", "version": "v1", "definition": ["steps": []],
                                       "status": .string(status.rawValue), "started_at": 1_700_000_000])!
        run.variables = variables
        return run
    }

    static func step(_ run: String, _ id: String, attempt: Int, _ status: WorkflowStepRecord.Status) -> WorkflowStepRecord {
        WorkflowStepRecord(runID: run, stepID: id, kind: "wait_signal", generation: 1, attempt: attempt, status: status, startedAt: 1_700_000_001)
    }

    static func change(_ seq: UInt64, runs: [WorkflowRun] = [], steps: [WorkflowStepRecord] = []) -> String {
        let change: JSONValue = ["runs": .array(runs.map(\.storedJSON)), "steps": .array(steps.map(\.storedJSON))]
        return #"{"seq":\#(seq),"change":true,"workflow":"# + change.serialized() + "}\n"
    }

    @Test func aWorkflowChangeInTheJournalIsWrittenOverAnOlderStateOnly() throws {
        let folder = TestPaths.temporaryDirectory("workflow-journal")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let path = folder + "/agent.sqlite"
        do {
            let store = try RunJournalTests.store(folder)
            let workflows = try SQLiteWorkflowStore(store: store)
            let done = DispatchSemaphore(value: 0)
            workflows.commit(WorkflowCommit(runs: [Self.run("waiting", .waiting), Self.run("ended", .succeeded), Self.run("retried", .running)],
                                            steps: [Self.step("waiting", "go", attempt: 1, .waiting), Self.step("ended", "go", attempt: 1, .succeeded),
                                                    Self.step("retried", "go", attempt: 2, .running)])) { _ in done.signal() }
            RunJournalTests.waitWritten(store)
            #expect(done.wait(timeout: .now() + 120) == .success)
            store.close()
        }
        let mark = try RunJournalTests.mark(at: path)
        // "waiting" got its signal (its step ended, the run went on); "ended" finished before its
        // line; "retried" is at a later attempt than its line; "gone" the store lacks.
        let text = Self.change(mark + 1, runs: [Self.run("waiting", .running, variables: ["n": 1])], steps: [Self.step("waiting", "go", attempt: 1, .succeeded)])
            + Self.change(mark + 2, runs: [Self.run("ended", .running)], steps: [Self.step("ended", "go", attempt: 1, .running)])
            + Self.change(mark + 3, steps: [Self.step("retried", "go", attempt: 1, .succeeded), Self.step("retried", "next", attempt: 1, .running)])
            + Self.change(mark + 4, runs: [Self.run("gone", .running)], steps: [Self.step("gone", "go", attempt: 1, .succeeded)])
        #expect(FileManager.default.createFile(atPath: RunJournal.path(for: path), contents: Data(text.utf8)))
        let store = try RunJournalTests.store(folder)
        defer { store.close() }
        let reader = try AgentStore.readOnlyQueue(path: path)
        let waiting = try #require(try SQLiteWorkflowStore.run(id: "waiting", reader: reader))
        #expect(waiting.run.status == .running && waiting.run.variables == ["n": 1])
        #expect(waiting.steps.map(\.status) == [.succeeded], "the signal's step ended")
        let ended = try #require(try SQLiteWorkflowStore.run(id: "ended", reader: reader))
        #expect(ended.run.status == .succeeded && ended.steps.map(\.status) == [.succeeded], "a finished run was changed")
        let retried = try #require(try SQLiteWorkflowStore.run(id: "retried", reader: reader))
        #expect(retried.steps.map { "\($0.stepID) \($0.attempt) \($0.status.rawValue)" } == ["go 2 running", "next 1 running"],
                "an earlier attempt undid a later one, or a new step was not written")
        #expect(try SQLiteWorkflowStore.run(id: "gone", reader: reader) == nil, "a change made a run the store did not have")
        #expect(try RunJournalTests.mark(at: path) == mark + 4)
    }

    @Test func aJournalLineOfAWorkflowChangeIsReadBackWhole() throws {
        let line = Self.change(7, runs: [Self.run("r", .running)], steps: [Self.step("r", "go", attempt: 1, .succeeded)])
        let entry = try #require(RunJournal.entry(Array(line.utf8.dropLast())))
        #expect(entry.0 == 7)
        guard case .workflow(let commit) = entry.1 else { Issue.record("not read as a workflow change: \(entry.1)"); return }
        #expect(commit.runs == [Self.run("r", .running)] && commit.steps == [Self.step("r", "go", attempt: 1, .succeeded)])
        // A step that is not one: the line is not ours, not half applied.
        let broken = #"{"seq":8,"change":true,"workflow":{"runs":[],"steps":[{"run_id":"r"}]}}"#
        #expect(RunJournal.entry(Array(broken.utf8)) == nil)
    }

    @Test func keptWorkflowChangesTheJournalHoldsNeverGiveWay() {
        var kept = RetainedWrites(limit: 1)
        let commits = ["a", "b", "c"].map { WorkflowCommit(runs: [Self.run($0, .running)]) }
        #expect(kept.keep(runs: [], workflows: commits, journaled: [true, false, true]) == 1)
        #expect(kept.workflows.map { $0.runs[0].id } == ["a", "c"])
        #expect(kept.lost == 1)
    }
}
