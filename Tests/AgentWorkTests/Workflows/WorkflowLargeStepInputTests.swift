@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A task step whose input is large is checked and written as text off the loop: it begins
/// when that is back, its run holds the text alone, and what the checks refuse fails the step
/// as it did when they were made on the loop.
@Suite(.ownThreads) struct WorkflowLargeStepInputTests {
    let loop = EventLoop()
    let runner = RecordingRunner()

    @LoopActor struct Harness {
        let loop: EventLoop
        let store = WorkflowWaitGapTests.HeldStore()
        let engine: WorkflowEngine
        let tasks: TaskCoordinator

        init(on loop: EventLoop, runner: RecordingRunner, steps: String, schema: JSONValue? = nil) throws {
            self.loop = loop
            let logger = Logger(label: "test")
            tasks = TaskCoordinator(loop: loop, store: nil, logger: logger)
            tasks.register(runner, for: "command")
            tasks.apply([TaskDefinition(name: "t", type: "command", command: .init(arguments: ["/bin/true"]), inputSchema: schema)])
            engine = WorkflowEngine(loop: loop, store: store, tasks: tasks, logger: logger)
            let source = #"{"input": {"type": "object"}, "steps": \#(steps)}"#
            engine.apply([try #require(WorkflowSettings.parse(name: "big", source: try JSONValue.parse(Data(source.utf8))))])
        }

        /// Lands commits and turns the loop (whose inbox brings the checks back) until
        /// `condition` holds, for at most 30 s: a loaded machine's thread may come late.
        func land(until condition: () -> Bool) {
            let deadline = Date().addingTimeInterval(30)
            while !condition(), Date() < deadline {
                store.release()
                loop.runOnce(maxWait: 0.01)
            }
        }

        func record(_ run: String, _ step: String) -> WorkflowStepRecord? {
            engine.known(run)?.steps.last { $0.stepID == step }
        }
    }

    /// ~40 KiB of JSON: past the 16 KiB from which a step's input is checked off the loop.
    static let large = RunInputHeldTests.input(kib: 40)

    @Test func aLargeStepInputReachesItsRunWholeHeldAsItsText() throws {
        try loop.isolated {
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": {"all": "${input}"}}]"#)
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { !runner.started.isEmpty }
            let started = try #require(runner.started.first)
            // Held as the text alone, which reads back as the input built from the references.
            #expect(started.held.isTextOnly)
            let same = started.input == ["all": Self.large]
            #expect(same)
            #expect(harness.tasks.heldInputBytes == started.held.textBytes, "the step's input counts among the unfinished runs' inputs")
            runner.finish(started.runID, TaskRunOutcome(status: .succeeded, output: "ok"))
            harness.land { harness.engine.known(run.id)?.run.status.isFinished == true }
            #expect(harness.engine.known(run.id)?.run.status == .succeeded)
            #expect(harness.record(run.id, "a")?.detail["input"]?["all"]?["tag"] == 0)
            #expect(harness.tasks.heldInputBytes == 0)
        }
    }

    /// A step's run made again from its record (here: its task was interrupted; so too after a
    /// restart) has its large input's text made off the loop before it is submitted.
    @Test func aStepsRunMadeAgainFromItsRecordHoldsItsLargeInputAsText() throws {
        try loop.isolated {
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": {"all": "${input}"}}]"#)
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { !runner.started.isEmpty }
            let first = try #require(runner.started.first)
            runner.finish(first.runID, TaskRunOutcome(status: .failed, error: "interrupted: the agent stopped while the task ran"))
            harness.land { runner.started.count == 2 }
            let again = try #require(runner.started.last)
            #expect(again.runID != first.runID && again.idempotencyKey == first.idempotencyKey)
            #expect(again.held.isTextOnly)
            let same = again.input == ["all": Self.large]
            #expect(same)
            runner.finish(again.runID, TaskRunOutcome(status: .succeeded))
            harness.land { harness.engine.known(run.id)?.run.status.isFinished == true }
            #expect(harness.engine.known(run.id)?.run.status == .succeeded)
        }
    }

    @Test func aLargeStepInputTheTasksSchemaRefusesFailsTheStepWithThePointer() throws {
        try loop.isolated {
            let schema: JSONValue = ["properties": ["all": ["properties": ["tag": ["type": "string"]]]]]
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": {"all": "${input}"}}]"#, schema: schema)
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { harness.engine.known(run.id)?.run.status.isFinished == true }
            let record = try #require(harness.record(run.id, "a"))
            #expect(record.status == .failed)
            let error = record.error ?? ""
            #expect(error.contains("does not match its input schema at /input/all/tag"), "\(error)")
            #expect(runner.started.isEmpty)
        }
    }

    @Test func aStepInputBuiltPastOneMebibyteFailsTheStepWithoutKeepingIt() throws {
        try loop.isolated {
            // 300 KiB used four times: each reference is fine, the whole is not.
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": ["${input}", "${input}", "${input}", "${input}"]}]"#)
            let input = RunInputHeldTests.input(kib: 300)
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: input, requestedBy: "test")
            harness.land { harness.engine.known(run.id)?.run.status.isFinished == true }
            let record = try #require(harness.record(run.id, "a"))
            #expect(record.status == .failed && record.detail["input"] == nil)
            let error = record.error ?? ""
            #expect(error.contains("the input built for task \"t\" is too large"), "\(error)")
            #expect(runner.started.isEmpty)
        }
    }

    /// A branch that loses a `join: "first"` while its step's large input is checked: the step
    /// never begins (it stayed `running` for good, its task never submitted).
    @Test func aLosingBranchsStepWhoseInputIsCheckedNeverBegins() throws {
        try loop.isolated {
            let steps = #"""
                [{"id": "p", "parallel": {"join": "first", "branches": [[{"id": "q1", "set": {"vars": {"v": 1}}}],
                                                                       [{"id": "q2", "task": "t", "input": {"x": "${input}"}}]]}},
                 {"id": "after", "wait_signal": {"name": "go"}}]
                """#
            let harness = try Harness(on: loop, runner: runner, steps: steps)
            // The check waits behind this job until the first branch has won.
            let hold = DispatchSemaphore(value: 0)
            RunInput.textMaking.submit { hold.wait() }
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { harness.record(run.id, "after") != nil }
            hold.signal()
            #expect(harness.record(run.id, "p")?.status == .succeeded)
            let passed = DispatchSemaphore(value: 0)
            RunInput.textMaking.submit { passed.signal() }
            harness.land { passed.wait(timeout: .now()) == .success }
            for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
            #expect(harness.record(run.id, "q2") == nil, "q2: \(String(describing: harness.record(run.id, "q2")?.status))")
            #expect(runner.started.isEmpty)
            #expect(harness.engine.known(run.id)?.run.status == .waiting)
        }
    }

    /// An input its references nest past the bound fails its step saying so (not "does not
    /// match its input schema": the task has none), and is not kept in the record.
    @Test func aStepInputNestedTooDeeplyFailsItsStepSayingSoWithoutKeepingIt() throws {
        try loop.isolated {
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": {"x": {"y": "${input}"}}}]"#)
            var deep: JSONValue = ["items": Self.large]
            for _ in 0..<99 { deep = ["d": deep] }
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: deep, requestedBy: "test")
            harness.land { harness.engine.known(run.id)?.run.status.isFinished == true }
            let record = try #require(harness.record(run.id, "a"))
            #expect(record.status == .failed && record.detail["input"] == nil)
            let error = record.error ?? ""
            #expect(error.hasPrefix("the input built for task \"t\" is nested too deeply: the input nests arrays and objects more than 100 levels deep"), "\(error.prefix(200))")
            #expect(runner.started.isEmpty)
        }
    }

    /// A step whose input is being checked is about to run: its run is `running`, not `waiting`,
    /// though the only step with a record waits.
    @Test func aRunWhoseStepsInputIsCheckedBesideAWaitIsRunning() throws {
        try loop.isolated {
            let steps = #"""
                [{"id": "p", "parallel": {"join": "all", "branches": [[{"id": "w", "wait_signal": {"name": "go"}}],
                                                                     [{"id": "t", "task": "t", "input": {"x": "${input}"}}]]}}]
                """#
            let harness = try Harness(on: loop, runner: runner, steps: steps)
            let hold = DispatchSemaphore(value: 0)
            RunInput.textMaking.submit { hold.wait() }
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { harness.record(run.id, "w")?.status == .waiting && harness.store.waiting == 0 }
            #expect(harness.engine.live[run.id]?.checking["t"] != nil)
            #expect(harness.engine.known(run.id)?.run.status == .running)
            hold.signal()
            harness.land { !runner.started.isEmpty }
            #expect(runner.started.count == 1)
        }
    }

    @Test func aRunCancelledWhileItsStepsInputIsCheckedStartsNoTask() throws {
        try loop.isolated {
            let harness = try Harness(on: loop, runner: runner, steps: #"[{"id": "a", "task": "t", "input": {"all": "${input}"}}]"#)
            // The check waits behind this job until the run is cancelled.
            let hold = DispatchSemaphore(value: 0)
            RunInput.textMaking.submit { hold.wait() }
            let run = harness.engine.start(try #require(harness.engine.definitions["big"]), input: Self.large, requestedBy: "test")
            harness.land { harness.engine.live[run.id]?.checking["a"] != nil }
            #expect(harness.record(run.id, "a") == nil, "the step begins only once its input is checked")
            let cancelled = harness.engine.cancel(run.id, by: "test")
            #expect(cancelled?.status == .cancelled)
            hold.signal()
            // The check comes back to a run that has ended: nothing begins.
            let passed = DispatchSemaphore(value: 0)
            RunInput.textMaking.submit { passed.signal() }
            harness.land { passed.wait(timeout: .now()) == .success }
            for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
            #expect(runner.started.isEmpty)
            #expect(harness.record(run.id, "a") == nil)
            #expect(harness.engine.known(run.id)?.run.status == .cancelled)
        }
    }
}
