@testable import AgentLoop
import AgentBase
import AgentStore
import AgentStoreConformance
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A workflow's task step found again after a restart (its run started in an earlier life of
/// the agent) reads its task run from the store off the loop, then takes the run's end if it
/// finished, or submits it again under the same id if it was never committed.
@Suite(.ownThreads) struct WorkflowStepFoundAgainTests {
    static let flow = WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "s", "task": "t"]]])!
    /// The same with a timeout on the step's task.
    static let timed = WorkflowSettings.parse(name: "flow", source: ["steps": [["id": "s", "task": "t", "timeout": 5]]])!

    /// An agent's stores in `folder`, with a workflow run whose step `s` was started with task
    /// run `task-1` (its deadline `deadline`), and `stored` (if any) in the task runs.
    static func previousLife(_ folder: String, stored: TaskRun?, flow: WorkflowDefinition = flow, deadline: Double? = nil) throws -> AgentStore {
        let store = try RunJournalTests.store(folder)
        let runs = try SQLiteRunStore(store: store)
        let workflows = try SQLiteWorkflowStore(store: store)
        var run = WorkflowRun(id: "w1", workflow: flow, input: [:], requestedBy: "cli")
        run.status = .running
        var record = WorkflowStepRecord(runID: "w1", stepID: "s", kind: "task", generation: 1, attempt: 1, status: .running)
        record.taskRun = "task-1"
        record.detail["input"] = ["n": 1]
        record.deadline = deadline
        let change = WorkflowCommit(runs: [run], steps: [record])
        #expect(try StoreWait.result { await StoreContract.commit(workflows, change) } == .written)
        if let stored {
            runs.record(stored)
            try StoreWait.result { await runs.flush() }
        }
        return store
    }

    /// Starts the agent's work again on `store` (as its start does: task runs, then workflow
    /// runs) and turns the loop until the workflow run ends; what the runner was asked to start.
    static func restart(_ store: AgentStore, flow: WorkflowDefinition = flow, untilEnded: Bool = false)
        throws -> (run: WorkflowRun?, step: WorkflowStepRecord?, started: [String]) {
        let runs = try SQLiteRunStore(store: store)
        let workflows = try SQLiteWorkflowStore(store: store)
        let unfinished = try workflows.loadUnfinishedNow()
        let loop = EventLoop()
        let runner = RunJournalTests.HoldingRunner()
        let engine = loop.isolated { () -> WorkflowEngine in
            let tasks = TaskCoordinator(loop: loop, store: runs, logger: Logger(label: "test"))
            tasks.register(runner, for: "command")
            tasks.apply([TaskDefinition(name: "t", type: "command", command: .init(arguments: ["/bin/true"]))])
            let engine = WorkflowEngine(loop: loop, store: workflows, tasks: tasks, logger: Logger(label: "test"))
            engine.apply([flow])
            engine.recover(unfinished)
            #expect(engine.known("w1")?.steps.last?.status == .running, "the step waits for the store's answer, off the loop")
            #expect(runner.started.isEmpty)
            return engine
        }
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline {
            loop.runOnce(maxWait: 0.05)
            let done = loop.isolated { engine.known("w1")?.run.status.isFinished == true || !untilEnded && !runner.started.isEmpty }
            if done { break }
        }
        return loop.isolated { (engine.known("w1")?.run, engine.known("w1")?.steps.last, runner.started) }
    }

    @Test func aStepWhoseTaskRunFinishedBeforeTheRestartTakesItsOutputAndRunsNothingAgain() throws {
        let folder = TestPaths.temporaryDirectory("workflow-found-again")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        var finished = StoreContract.run("task-1", status: .succeeded)
        finished.output = ["answer": 42]
        let store = try Self.previousLife(folder, stored: finished)
        defer { store.close() }
        let (run, step, started) = try Self.restart(store)
        #expect(run?.status == .succeeded)
        #expect(step?.status == .succeeded)
        #expect(step?.output == ["answer": 42])
        #expect(started.isEmpty, "the finished run was not started again")
    }

    @Test func aStepWhoseTaskRunWasNeverCommittedSubmitsItAgainUnderTheSameID() throws {
        let folder = TestPaths.temporaryDirectory("workflow-found-again-missing")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.previousLife(folder, stored: nil)
        defer { store.close() }
        let (run, step, started) = try Self.restart(store)
        #expect(started == ["task-1"])
        #expect(run?.status == .running)
        #expect(step?.status == .running)
    }

    /// Its deadline passed while the agent was down: the timer fired while the run was being
    /// read (and cancelled nothing, the run unknown yet); armed again, it cancels the run.
    @Test func aStepWhoseDeadlinePassedWhileTheAgentWasDownTimesOutOnceItsRunIsSubmitted() throws {
        let folder = TestPaths.temporaryDirectory("workflow-found-again-late")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try Self.previousLife(folder, stored: nil, flow: Self.timed, deadline: Date().timeIntervalSince1970 - 60)
        defer { store.close() }
        let (run, step, started) = try Self.restart(store, flow: Self.timed, untilEnded: true)
        #expect(started == ["task-1"])
        #expect(step?.status == .timedOut, "\(String(describing: step))")
        #expect(run?.status == .failed)
    }
}
