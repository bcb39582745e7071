@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A runner that only records what the coordinator asks of it and finishes runs when the test
/// says: these tests are about the coordinator, the runner's caller. The loop's, as the real
/// runners are (then a suite holding one is `Sendable`, and its tests enter the loop with it).
@LoopActor final class RecordingRunner: @LoopActor TaskRunner {
    var started: [TaskRunStart] = []
    var cancelled: [(id: String, reason: TaskRunOutcome.Status)] = []
    private var reports: [String: (TaskRunReport) -> Void] = [:]
    var shutDownCalls = 0

    var running: [String] { reports.keys.sorted() }
    /// Whether it holds a run sent before its not-before (as the module runner does).
    var holdsRunsAhead = false
    var startsAhead: Bool { holdsRunsAhead }
    /// Whether it reads inputs as values (as the command runner does).
    var readsValues = false
    var readsInputValue: Bool { readsValues }

    nonisolated init() {}

    func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
        started.append(run)
        reports[run.runID] = report
    }

    func cancel(runID: String, reason: TaskRunOutcome.Status) {
        cancelled.append((runID, reason))
        reports.removeValue(forKey: runID)?(.finished(TaskRunOutcome(status: reason, error: "ended: \(reason.rawValue)")))
    }

    func shutDown() {
        shutDownCalls += 1
        for report in reports.values { report(.finished(TaskRunOutcome(status: .interrupted))) }
        reports = [:]
    }

    func finish(_ id: String, _ outcome: TaskRunOutcome) {
        reports.removeValue(forKey: id)?(.finished(outcome))
    }
}

/// A runner whose runs take their time to end after a cancel (until ``shutDown()``).
@LoopActor final class SlowRunner: @LoopActor TaskRunner {
    private var reports: [String: (TaskRunReport) -> Void] = [:]
    var shutDownCalls = 0

    func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) { reports[run.runID] = report }
    func cancel(runID: String, reason: TaskRunOutcome.Status) {}
    func shutDown() {
        shutDownCalls += 1
        for report in reports.values { report(.finished(TaskRunOutcome(status: .interrupted))) }
        reports = [:]
    }
}

/// The coordinator's decisions: queue order, concurrency, retries and their backoff, timeouts,
/// cancellation, recovery of a dead agent's runs; driven on a real event loop.
@Suite(.ownThreads) struct TaskCoordinatorTests {
    let loop = EventLoop()
    let runner = RecordingRunner()

    @LoopActor func coordinator(_ tasks: [TaskDefinition], store: (any RunStore)? = nil) -> TaskCoordinator {
        let coordinator = TaskCoordinator(loop: loop, store: store, logger: Logger(label: "test"))
        coordinator.register(runner, for: "command")
        coordinator.apply(tasks)
        return coordinator
    }

    static func task(_ name: String, concurrent: Int = 1, retries: TaskDefinition.RetryPolicy = .init(), timeout: Double? = nil) -> TaskDefinition {
        TaskDefinition(name: name, type: "command", timeout: timeout, retries: retries, maxConcurrent: concurrent,
                       command: .init(arguments: ["/bin/true"]))
    }

    /// Runs the loop until `condition` holds (at most `timeout` seconds).
    func spin(timeout: Double = 10, until condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
    }

    @Test func theQueueGoesByPriorityThenNotBeforeThenArrival() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")])
            let first = tasks.submit(task: "t", input: ["n": 0], priority: .low, notBefore: nil, requestedBy: .cli)
            #expect(runner.started.map(\.runID) == [first.id])
            // Half an aging interval (60 s) earlier: before the other normal runs, still after high ones.
            let past = Date().timeIntervalSince1970 - 30
            let low = tasks.submit(task: "t", input: ["n": 1], priority: .low, notBefore: nil, requestedBy: .cli)
            let normal = tasks.submit(task: "t", input: ["n": 2], priority: .normal, notBefore: nil, requestedBy: .cli)
            let critical = tasks.submit(task: "t", input: ["n": 3], priority: .critical, notBefore: nil, requestedBy: .cli)
            let normalEarlier = tasks.submit(task: "t", input: ["n": 4], priority: .normal, notBefore: past, requestedBy: .cli)
            let high = tasks.submit(task: "t", input: ["n": 5], priority: .high, notBefore: nil, requestedBy: .cli)
            let normalLater = tasks.submit(task: "t", input: ["n": 6], priority: .normal, notBefore: nil, requestedBy: .cli)
            #expect(runner.started.count == 1, "max_concurrent 1: the others wait")
            for _ in 0..<6 { runner.finish(runner.running[0], TaskRunOutcome(status: .succeeded)) }
            #expect(runner.started.map(\.runID) == [first.id, critical.id, high.id, normalEarlier.id, normal.id, normalLater.id, low.id].prefix(7).map { $0 })
            #expect(tasks.knownRun(critical.id)?.status == .succeeded)
        }
    }

    @Test func maxConcurrentIsPerTask() {
        loop.isolated {
            let tasks = coordinator([Self.task("two", concurrent: 2), Self.task("one")])
            for _ in 0..<3 { tasks.submit(task: "two", input: [:], priority: .normal, notBefore: nil, requestedBy: .http) }
            for _ in 0..<2 { tasks.submit(task: "one", input: [:], priority: .normal, notBefore: nil, requestedBy: .http) }
            #expect(runner.started.filter { $0.task.name == "two" }.count == 2)
            #expect(runner.started.filter { $0.task.name == "one" }.count == 1)
            runner.finish(runner.started[0].runID, TaskRunOutcome(status: .succeeded))
            #expect(runner.started.filter { $0.task.name == "two" }.count == 3)
        }
    }

    @Test func aFailedRunIsRetriedWithBackoffAndTheAttemptGrows() {
        loop.isolated {
            let policy = TaskDefinition.RetryPolicy(max: 2, initialDelay: 0.05, multiplier: 4, maxDelay: 0.3)
            let tasks = coordinator([Self.task("flaky", retries: policy)])
            var ends: [TaskCoordinator.AttemptEnd] = []
            tasks.attemptEnded = { ends.append($0) }
            let run = tasks.submit(task: "flaky", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            runner.finish(run.id, TaskRunOutcome(status: .failed, error: "exit 1", exitCode: 1))
            #expect(tasks.knownRun(run.id)?.status == .retrying)
            #expect(ends.last?.retryFollows == true)
            let firstFailure = Date()
            spin { runner.started.count == 2 }
            #expect(Date().timeIntervalSince(firstFailure) >= 0.04)
            #expect(runner.started.map(\.attempt) == [1, 2])
            #expect(Set(runner.started.map(\.runID)) == [run.id], "the same run id across attempts")
            runner.finish(run.id, TaskRunOutcome(status: .timedOut))
            let secondFailure = Date()
            spin { runner.started.count == 3 }
            #expect(Date().timeIntervalSince(secondFailure) >= 0.19, "the second retry waits initial_delay × multiplier")
            runner.finish(run.id, TaskRunOutcome(status: .failed, error: "exit 2", exitCode: 2))
            let final = tasks.knownRun(run.id)
            #expect(final?.status == .failed)
            #expect(final?.attempt == 3)
            #expect(final?.exitCode == 2)
            #expect(ends.map(\.retryFollows) == [true, true, false])
        }
    }

    @Test func theBackoffIsInitialDelayTimesMultiplierToTheNMinusOneCappedByMaxDelay() {
        loop.isolated {
            let policy = TaskDefinition.RetryPolicy(max: 10, initialDelay: 5, multiplier: 2, maxDelay: 300)
            #expect((1...8).map { TaskCoordinator.retryDelay(policy, retry: $0) } == [5, 10, 20, 40, 80, 160, 300, 300])
            let huge = TaskDefinition.RetryPolicy(max: 1_000_000, initialDelay: 86_400, multiplier: 1_000, maxDelay: 86_400)
            #expect(TaskCoordinator.retryDelay(huge, retry: 1_000_000) == 86_400, "saturates, never overflows")
        }
    }

    @Test func aRunThatOutlivesItsTimeoutIsCancelledAsTimedOut() {
        loop.isolated {
            let tasks = coordinator([Self.task("slow", timeout: 0.05)])
            let run = tasks.submit(task: "slow", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            spin { tasks.knownRun(run.id)?.status.isFinished == true }
            #expect(runner.cancelled.map(\.reason) == [.timedOut])
            #expect(tasks.knownRun(run.id)?.status == .timedOut)
        }
    }

    @Test func cancellingAQueuedRunAndARunningRun() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")])
            let running = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            let queued = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            #expect(tasks.cancel(queued.id)?.status == .cancelled)
            #expect(runner.cancelled.isEmpty, "a queued run never reaches the runner")
            _ = tasks.cancel(running.id)
            #expect(runner.cancelled.map(\.id) == [running.id])
            #expect(tasks.knownRun(running.id)?.status == .cancelled)
            #expect(runner.started.count == 1, "the cancelled queued run does not start")
            #expect(tasks.cancel("no-such-run") == nil)
        }
    }

    @Test func aRunAtALaterTimeWaitsForIt() {
        loop.isolated {
            let tasks = coordinator([Self.task("later")])
            let run = tasks.submit(task: "later", input: [:], priority: .normal, notBefore: Date().timeIntervalSince1970 + 0.2, requestedBy: .cli)
            loop.runOnce(maxWait: 0.05)
            #expect(runner.started.isEmpty)
            #expect(tasks.knownRun(run.id)?.status == .queued)
            spin { !runner.started.isEmpty }
            #expect(runner.started.map(\.runID) == [run.id])
        }
    }

    /// A run due within the window goes at once to a runner that holds runs until their
    /// instant; one due later, or for a runner that does not hold, waits in the coordinator.
    @Test func aRunDueSoonGoesAheadToARunnerThatHoldsItUntilItsInstant() {
        loop.isolated {
            runner.holdsRunsAhead = true
            let tasks = coordinator([Self.task("soon", concurrent: 5)])
            let instant = Date().timeIntervalSince1970 + 0.15
            let soon = tasks.submit(task: "soon", input: [:], priority: .normal, notBefore: instant, requestedBy: .schedule)
            let later = tasks.submit(task: "soon", input: [:], priority: .normal, notBefore: Date().timeIntervalSince1970 + 30, requestedBy: .cli)
            #expect(runner.started.map(\.runID) == [soon.id])
            #expect(runner.started.first?.notBefore == instant)
            let running = tasks.knownRun(soon.id)
            #expect(running?.status == .running)
            #expect(running?.startedAt == instant, "it starts at its instant, not when it was sent")
            #expect(tasks.knownRun(later.id)?.status == .queued)

            runner.holdsRunsAhead = false
            let waits = tasks.submit(task: "soon", input: [:], priority: .normal, notBefore: Date().timeIntervalSince1970 + 0.15, requestedBy: .cli)
            #expect(!runner.started.map(\.runID).contains(waits.id))
            spin { runner.started.map(\.runID).contains(waits.id) }
            #expect(runner.started.last?.notBefore == nil, "released by the coordinator at its instant: nothing to hold")
        }
    }

    /// The agent stops while a run sent ahead waits for its instant in the runner: it never
    /// started, so it is queued again for that instant, its attempt not counted.
    @Test func aRunSentAheadThatAStopEndsBeforeItsInstantIsQueuedAgainNotInterrupted() {
        loop.isolated {
            runner.holdsRunsAhead = true
            let tasks = coordinator([Self.task("soon")])
            let instant = Date().timeIntervalSince1970 + 0.18
            let run = tasks.submit(task: "soon", input: [:], priority: .normal, notBefore: instant, requestedBy: .schedule)
            #expect(runner.started.map(\.runID) == [run.id])
            tasks.shutDown()
            let kept = tasks.knownRun(run.id)
            #expect(kept?.status == .queued)
            #expect(kept?.attempt == 0)
            #expect(kept?.notBefore == instant)
            #expect(tasks.figures.first?.ended["interrupted"] == nil)
        }
    }

    @Test func theRunsADeadAgentLeftAreInterruptedAndRetriedOrQueuedAgain() {
        loop.isolated {
            let tasks = coordinator([Self.task("t", concurrent: 5, retries: .init(max: 0, initialDelay: 0))])
            var running = TaskRun(id: "old-1", task: "t", requestedBy: .cli)
            running.status = .running
            running.attempt = 1
            var twice = TaskRun(id: "old-2", task: "t", requestedBy: .cli)
            twice.status = .running
            twice.attempt = 2
            let queued = TaskRun(id: "old-3", task: "t", requestedBy: .http)
            let gone = TaskRun(id: "old-4", task: "removed", requestedBy: .http)
            tasks.recover([running, twice, queued, gone])
            spin { runner.started.count == 3 }
            #expect(runner.started.map(\.runID).sorted() == ["old-1", "old-2", "old-3"])
            #expect(runner.started.first { $0.runID == "old-1" }?.attempt == 2, "an interrupted attempt runs again even without a retry policy")
            #expect(runner.started.first { $0.runID == "old-2" }?.attempt == 3, "and again: interruptions are not the policy's attempts")
            #expect(tasks.knownRun("old-2")?.interruptions == 1)
            #expect(tasks.knownRun("old-4")?.status == .failed)
        }
    }

    @Test func aReloadKeepsRunningRunsOnTheirDefinitionAndFailsQueuedRunsOfARemovedTask() {
        loop.isolated {
            let tasks = coordinator([Self.task("t"), Self.task("gone")])
            let running = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            _ = tasks.submit(task: "gone", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            let waiting = tasks.submit(task: "gone", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            tasks.apply([Self.task("t", timeout: 99)])
            #expect(tasks.knownRun(waiting.id)?.status == .failed)
            #expect(runner.started.first { $0.runID == running.id }?.task.timeout == nil)
            #expect(tasks.knownRun(running.id)?.status == .running)
        }
    }

    @Test func inputIsCheckedAgainstTheTaskSchemaWithPointers() {
        loop.isolated {
            var task = Self.task("typed")
            task.inputSchema = ["type": "object", "required": ["path"], "properties": ["path": ["type": "string"], "count": ["type": "integer"]]]
            let tasks = coordinator([task])
            #expect(tasks.inputProblems(["path": "/tmp"], task: "typed").isEmpty)
            let problems = tasks.inputProblems(["count": "three"], task: "typed")
            #expect(Set(problems.map(\.pointer)) == ["/input", "/input/count"])
        }
    }

    @Test func aStopCancelsRunningRunsAsInterruptedAndKeepsThemForTheNextStartWithoutNotifying() throws {
        try loop.isolated {
            let tasks = coordinator([Self.task("t", concurrent: 2)])
            var ended: [TaskCoordinator.AttemptEnd] = []
            tasks.attemptEnded = { ended.append($0) }
            let run = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            let queued = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: Date().timeIntervalSince1970 + 3600, requestedBy: .cli)
            tasks.shutDown()
            #expect(runner.cancelled.map(\.id) == [run.id])
            #expect(runner.cancelled.first?.reason == .interrupted)
            #expect(runner.shutDownCalls == 1)
            #expect(!tasks.hasRunsGoing)
            let stopped = tasks.knownRun(run.id)
            #expect(stopped?.status == .retrying)
            #expect(stopped?.attempt == 1)
            #expect(stopped?.error?.contains("interrupted: the agent stopped while attempt 1 ran") == true)
            #expect(stopped?.interruptions == 1)
            #expect(tasks.knownRun(queued.id)?.status == .queued)
            #expect(ended.isEmpty, "no notification for a run the stop interrupted")
            #expect(tasks.figures.first?.ended["interrupted"] == 1)

            // The next start runs it again, as attempt 2.
            let next = TaskCoordinator(loop: loop, store: nil, logger: Logger(label: "test"))
            let again = RecordingRunner()
            next.register(again, for: "command")
            next.apply([Self.task("t", concurrent: 2)])
            next.recover([try #require(stopped)])
            spin { !again.started.isEmpty }
            #expect(again.started.map(\.runID) == [run.id])
            #expect(again.started.first?.attempt == 2)
        }
    }

    @Test func aStopWaitsForARunnerThatTakesItsGraceAndEndStopKillsWhatIsLeft() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")])
            let slow = SlowRunner()
            tasks.register(slow, for: "command")
            let run = tasks.submit(task: "t", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            tasks.shutDown()
            #expect(tasks.hasRunsGoing, "the run has its grace")
            #expect(tasks.knownRun(run.id)?.status == .running)
            tasks.endStop()
            #expect(!tasks.hasRunsGoing)
            #expect(slow.shutDownCalls == 1)
            #expect(tasks.knownRun(run.id)?.status == .retrying)
        }
    }
}
