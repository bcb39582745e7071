@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import Logging
import Testing

/// Interrupted attempts (the agent stopped or died while they ran) are counted apart from the
/// retry policy and bounded by the task's `max_interruptions`: the coordinator's decisions, on
/// a real event loop with a recording runner.
@Suite(.ownThreads) struct TaskInterruptionTests {
    let loop = EventLoop()
    let runner = RecordingRunner()

    @LoopActor func coordinator(_ tasks: [TaskDefinition]) -> TaskCoordinator {
        let coordinator = TaskCoordinator(loop: loop, store: nil, logger: Logger(label: "test"))
        coordinator.register(runner, for: "command")
        coordinator.apply(tasks)
        return coordinator
    }

    static func task(retries: Int = 0, maxInterruptions: Int = TaskDefinition.defaultMaxInterruptions) -> TaskDefinition {
        var task = TaskDefinition(name: "t", type: "command", retries: .init(max: retries, initialDelay: 0), maxConcurrent: 5,
                                  command: .init(arguments: ["/bin/true"]))
        task.maxInterruptions = maxInterruptions
        return task
    }

    /// A run the previous life of the agent left `running`.
    static func left(_ id: String, attempt: Int, interruptions: Int) -> TaskRun {
        var run = TaskRun(id: id, task: "t", requestedBy: .cli)
        run.status = .running
        run.attempt = attempt
        run.interruptions = interruptions
        return run
    }

    func spin(timeout: Double = 10, until condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
    }

    /// The stop interrupts a run while another waits for its room: at the next start the
    /// interrupted one runs first, in the place it had, not behind the one that came after it.
    @Test func aRunTheStopInterruptedRunsAgainBeforeARunQueuedWhileItRan() throws {
        try loop.isolated {
            var one = Self.task()
            one.maxConcurrent = 1
            let tasks = coordinator([one])
            let first = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            spin { runner.running == [first.id] }
            let second = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            tasks.shutDown()
            spin { !tasks.hasRunsGoing }
            let left = [try #require(tasks.knownRun(first.id)), try #require(tasks.knownRun(second.id))]
            #expect(left[0].status == .retrying && left[1].status == .queued)
            #expect((left[0].nextAttemptAt ?? .infinity) <= left[1].queuedAt, "due in its own place")

            let next = coordinator([one])
            next.recover(left)
            spin { runner.running.count == 1 }
            #expect(runner.running == [first.id])
            #expect(next.knownRun(second.id)?.status == .queued)
        }
    }

    /// The same when the agent died (the run found `running` at the next start), the first
    /// time or again (every attempt so far interrupted: its place is still its arrival).
    @Test(arguments: [(1, 0), (3, 2)])
    func aRunFoundInterruptedAtTheStartRunsBeforeARunQueuedAfterIt(attempt: Int, interruptions: Int) {
        loop.isolated {
            var one = Self.task()
            one.maxConcurrent = 1
            let tasks = coordinator([one])
            var died = Self.left("died", attempt: attempt, interruptions: interruptions)
            died.startedAt = Date().timeIntervalSince1970 + 1
            let queued = TaskRun(id: "later", task: "t", requestedBy: .cli)
            tasks.recover([died, queued])
            spin { runner.running.count == 1 }
            #expect(runner.running == ["died"])
            #expect(tasks.knownRun("later")?.status == .queued)
        }
    }

    @Test func interruptedAttemptsDoNotCountAgainstTheRetryPolicy() {
        loop.isolated {
            let tasks = coordinator([Self.task(retries: 1)])
            tasks.recover([Self.left("r", attempt: 3, interruptions: 2)])
            spin { runner.running == ["r"] }
            #expect(runner.started.last?.attempt == 4)
            #expect(tasks.knownRun("r")?.interruptions == 3)
            // Its first completed attempt fails: the policy's one retry follows.
            runner.finish("r", TaskRunOutcome(status: .failed, error: "exit 1"))
            spin { runner.started.count == 2 }
            #expect(runner.started.last?.attempt == 5)
            runner.finish("r", TaskRunOutcome(status: .failed, error: "exit 1"))
            spin { tasks.knownRun("r")?.status.isFinished == true }
            #expect(tasks.knownRun("r")?.status == .failed, "two completed attempts: the policy's retry is spent")
            #expect(tasks.knownRun("r")?.attempt == 5)
            #expect(tasks.knownRun("r")?.interruptions == 3)
        }
    }

    @Test func aRunInterruptedPastItsBoundIsAbandonedSayingWhichSettingRaisesIt() {
        loop.isolated {
            let tasks = coordinator([Self.task(retries: 5, maxInterruptions: 3)])
            var ended: [TaskCoordinator.AttemptEnd] = []
            tasks.attemptEnded = { ended.append($0) }
            tasks.recover([Self.left("within", attempt: 3, interruptions: 2), Self.left("past", attempt: 4, interruptions: 3)])
            spin { runner.running == ["within"] }
            let abandoned = tasks.knownRun("past")
            #expect(abandoned?.status == .abandoned)
            #expect(abandoned?.status.isFinished == true)
            #expect(abandoned?.interruptions == 4)
            #expect(abandoned?.error?.contains("interrupted 4 times") == true, "\(abandoned?.error ?? "")")
            #expect(abandoned?.error?.contains("max_interruptions (3)") == true)
            #expect(abandoned?.error?.contains("tasks.t") == true)
            #expect(ended.first { $0.run.id == "past" }?.retryFollows == false, "notified as the run's end")
            #expect(tasks.figures.first?.abandoned == 1)
            #expect(tasks.knownRun("within")?.interruptions == 3)
        }
    }

    @Test func aStopPastTheBoundAbandonsTheRunInsteadOfKeepingIt() {
        loop.isolated {
            let tasks = coordinator([Self.task(maxInterruptions: 0)])
            let run = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            tasks.shutDown()
            let stopped = tasks.knownRun(run.id)
            #expect(stopped?.status == .abandoned)
            #expect(stopped?.interruptions == 1)
            #expect(stopped?.error?.contains("interrupted once") == true, "\(stopped?.error ?? "")")
        }
    }

    @Test func maxInterruptionsIsReadFromTheSettingsWithItsDefault() {
        loop.isolated {
            let read = TaskSettings.read(["a": ["type": "command", "command": ["/bin/true"], "max_interruptions": 2],
                                          "b": ["type": "command", "command": ["/bin/true"]]], environment: [:])
            #expect(read.issues.isEmpty)
            #expect(read.tasks.map(\.maxInterruptions) == [2, TaskDefinition.defaultMaxInterruptions])
        }
    }

    @Test func aStoredRecordKeepsItsInterruptionsAndAnOlderOneHasNone() throws {
        loop.isolated {
            var run = Self.left("s", attempt: 2, interruptions: 1)
            run.status = .retrying
            #expect(TaskRun(stored: run.storedJSON)?.interruptions == 1)
            #expect(run.json["interruptions"]?.numberValue?.intValue == 1)
            var older = run.storedJSON.objectValue ?? [:]
            older["interruptions"] = nil
            #expect(TaskRun(stored: .object(older))?.interruptions == 0)
        }
    }
}
