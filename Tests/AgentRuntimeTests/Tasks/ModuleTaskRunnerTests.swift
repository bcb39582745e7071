@testable import AgentBase
@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// Module task runs in real executor workers: a supervisor embedded in the test with a
/// ``ModuleTaskRunner``, the `sample` module's `word_count` handler and the `faults` module's
/// `fault_task` (which fails, crashes, hangs or ignores cancellation on purpose).
@Suite(.ownThreads, .serialized) struct ModuleTaskRunnerTests {
    /// A supervisor with no configured process, its runner, and what the runner reported. Used
    /// on the test's thread, which drives the supervisor's loop: what touches the runner enters
    /// the loop (`inbox.isolated`), hence `Sendable` unchecked.
    final class Harness: @unchecked Sendable {
        let supervisor: Supervisor
        let runner: ModuleTaskRunner
        let log: OutputTestSupport.LogCapture
        var reports: [String: [TaskRunReport]] = [:]

        init(idleTimeout: Double = 60, cancelGrace: Double = 5, extra: [String: ModuleTaskRunner.ModuleTask] = [:]) {
            let (logger, log) = OutputTestSupport.capturingLogger()
            self.log = log
            let supervisor = Supervisor.make(
                configuration: SupervisorConfiguration(workerPath: TestPaths.products + "/agent-worker", environment: ProcessInfo.processInfo.environment),
                processes: [], console: ConsoleOutput(json: false, showEvents: false, fd: -1), logger: logger)
            self.supervisor = supervisor
            runner = supervisor.inbox.isolated {
                ModuleTaskRunner(host: supervisor, configuration: .init(idleTimeout: idleTimeout, cancelGrace: cancelGrace)) { type in
                    switch type {
                    case "sample.word_count":
                        ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "sample", library: TestPaths.products + "/libsample.so", sourceDirectory: nil),
                                                    type: "word_count", heartbeatTimeout: nil)
                    case "faults.fault_task":
                        ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "faults", library: TestPaths.products + "/libfaults.so", sourceDirectory: nil),
                                                    type: "fault_task", heartbeatTimeout: 1)
                    default: extra[type]
                    }
                }
            }
        }

        func start(_ runID: String, task: TaskDefinition, input: JSONValue, attempt: Int = 1, notBefore: Double? = nil) {
            supervisor.inbox.isolated {
                runner.start(TaskRunStart(runID: runID, attempt: attempt, task: task, input: input, notBefore: notBefore)) { [unowned self] report in
                    reports[runID, default: []].append(report)
                }
            }
        }

        func cancel(runID: String, reason: TaskRunOutcome.Status) {
            supervisor.inbox.isolated { runner.cancel(runID: runID, reason: reason) }
        }

        func outcome(_ runID: String) -> TaskRunOutcome? {
            for report in reports[runID] ?? [] { if case .finished(let outcome) = report { return outcome } }
            return nil
        }

        /// Runs the loop until the run finished; its outcome.
        func wait(_ runID: String, timeout: Double = 30) -> TaskRunOutcome? {
            supervisor.run(until: { outcome(runID) != nil }, timeout: timeout)
            return outcome(runID)
        }

        func executor(_ task: String) -> SupervisedProcessInfo? { supervisor.process(named: "task:\(task)") }

        func stop() {
            supervisor.inbox.isolated {
                runner.shutDown()
                supervisor.stopAll()
            }
            supervisor.run(until: { supervisor.inbox.isolated { supervisor.processes.allSatisfy { !$0.hasWorker } } }, timeout: 10)
        }
    }

    static let count = TaskDefinition(name: "count", type: "sample.word_count", settings: ["case_sensitive": false])
    static let faulty = TaskDefinition(name: "faulty", type: "faults.fault_task", maxConcurrent: 4)

    @Test func aSampleWordCountRunSucceedsAndTheNextOneTakesTheSameWarmExecutor() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("r1", task: Self.count, input: ["text": "The cat and the hat\nand THE bat", "top": 2])
        let first = try #require(harness.wait("r1"), "\(harness.log.lines)")
        #expect(first.status == .succeeded, "\(first)")
        #expect(first.output == ["words": 8, "lines": 2, "characters": 31,
                                 "top": [["word": "the", "count": 3], ["word": "and", "count": 2]]])
        // The result can come before the loop has handled the worker's ready frame.
        harness.supervisor.run(until: { harness.executor("count")?.state == .running }, timeout: 10)
        let executor = try #require(harness.executor("count"))
        #expect(executor.state == .running)
        #expect(executor.type == "word_count" && executor.module == "sample")
        let pid = executor.pid
        // The schema's default (top: 3) is filled in before decoding.
        harness.start("r2", task: Self.count, input: ["text": "a b a"])
        let second = try #require(harness.wait("r2"))
        #expect(second.output?["top"] == [["word": "a", "count": 2], ["word": "b", "count": 1]])
        #expect(harness.executor("count")?.pid == pid, "a second run started a second worker")
        #expect(harness.supervisor.snapshot.filter { $0.name.hasPrefix("task:") }.count == 1)
    }

    @Test func anInputFieldThatDoesNotDecodeFailsTheRunNamingTheField() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("bad", task: Self.count, input: ["text": 42])
        let outcome = try #require(harness.wait("bad"))
        #expect(outcome.status == .failed)
        #expect(outcome.error?.contains("/text") == true, "\(outcome)")
        #expect(outcome.error?.contains("expected a string") == true, "\(outcome)")
    }

    @Test func runsGoOnAtOnceInOneExecutorWithTheirRunIDAndAttempt() throws {
        let harness = Harness()
        defer { harness.stop() }
        // The executor's worker started first, so that its start is not counted below.
        harness.start("warm", task: Self.faulty, input: ["mode": "sleep", "ms": 1])
        #expect(harness.wait("warm")?.status == .succeeded)
        for n in 1...3 { harness.start("c\(n)", task: Self.faulty, input: ["mode": "sleep", "ms": 3000], attempt: n) }
        let began = EventLoop.now()
        harness.supervisor.run(until: { (1...3).allSatisfy { harness.outcome("c\($0)") != nil } }, timeout: 30)
        let took = EventLoop.now() - began
        let outcomes = (1...3).compactMap { harness.outcome("c\($0)") }
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.status == .succeeded }, "\(outcomes) \(harness.log.lines)")
        #expect(Set(outcomes.compactMap { $0.output?["pid"] }).count == 1, "\(outcomes)")
        #expect(outcomes.map { $0.output?["runID"] } == ["c1", "c2", "c3"])
        #expect(outcomes.map { $0.output?["attempt"] } == [1, 2, 3])
        // Three 3 s runs one after another would take 9 s.
        #expect(took < 9, "took \(took) s")
        #expect((harness.reports["c1"] ?? []).contains { if case .progress(_, let message) = $0 { message == "sleeping 3000 ms" } else { false } })
        #expect((harness.reports["c1"] ?? []).contains { if case .heartbeat = $0 { true } else { false } })
    }

    @Test func aHandlerErrorFailsTheRunAndTheExecutorStaysUp() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("f", task: Self.faulty, input: ["mode": "fail"], attempt: 2)
        let outcome = try #require(harness.wait("f"))
        #expect(outcome.status == .failed)
        #expect(outcome.error == "the fault_task failed on purpose (attempt 2)")
        // Still up: shown running once the loop has handled its ready frame.
        harness.supervisor.run(until: { harness.executor("faulty")?.state == .running }, timeout: 10)
        #expect(harness.executor("faulty")?.state == .running)
    }

    @Test func aCrashingHandlerCostsItsRunNeverTheAgentAndTheNextRunGetsANewWorker() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("ok", task: Self.faulty, input: ["mode": "ok"])
        let pid = try #require(harness.wait("ok")?.output?["pid"])
        harness.start("sleeping", task: Self.faulty, input: ["mode": "sleep", "ms": 20_000])
        harness.start("boom", task: Self.faulty, input: ["mode": "crash"])
        let crashed = try #require(harness.wait("boom"))
        #expect(crashed.status == .failed)
        #expect(crashed.error?.contains("was killed by SIGSEGV during the run") == true, "\(crashed)")
        // The other run it held goes with it.
        #expect(harness.wait("sleeping", timeout: 5)?.status == .failed)
        harness.start("after", task: Self.faulty, input: ["mode": "ok"])
        let after = try #require(harness.wait("after"))
        #expect(after.status == .succeeded)
        #expect(after.output?["pid"] != pid)
    }

    @Test func aHandlerThatSendsNoHeartbeatIsKilledByTheWatchdog() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("hang", task: Self.faulty, input: ["mode": "hang"])
        let outcome = try #require(harness.wait("hang"))
        #expect(outcome.status == .failed)
        #expect(outcome.error == "watchdog: run hang sent no heartbeat for 1 s (the task type's heartbeat_timeout)", "\(outcome)")
        #expect(harness.log.lines.contains { $0.contains("killed by SIGKILL") && $0.contains("watchdog: run hang") }, "\(harness.log.lines)")
    }

    @Test func cancelEndsACooperativeHandlerAndKillsTheWorkerOfOneThatIgnoresItAfterTheGrace() throws {
        let harness = Harness(cancelGrace: 0.5)
        defer { harness.stop() }
        harness.start("polite", task: Self.faulty, input: ["mode": "sleep", "ms": 20_000])
        harness.supervisor.run(until: { harness.executor("faulty")?.state == .running }, timeout: 20)
        let pid = try #require(harness.executor("faulty")?.pid)
        harness.cancel(runID: "polite", reason: .cancelled)
        let polite = try #require(harness.wait("polite", timeout: 5))
        #expect(polite.status == .cancelled, "\(polite)")
        #expect(harness.executor("faulty")?.pid == pid, "a cooperative handler's worker was killed")

        harness.start("stubborn", task: Self.faulty, input: ["mode": "ignore_cancel", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["stubborn"]?.isEmpty == false }, timeout: 10)
        harness.cancel(runID: "stubborn", reason: .timedOut)
        let stubborn = try #require(harness.wait("stubborn", timeout: 10))
        #expect(stubborn.status == .timedOut)
        #expect(stubborn.error?.contains("did not end within 0.5 s, so its worker was killed") == true, "\(stubborn)")
    }

    @Test func anIdleExecutorIsStoppedAfterItsIdleTime() throws {
        let harness = Harness(idleTimeout: 0.3)
        defer { harness.stop() }
        harness.start("one", task: Self.count, input: ["text": "x"])
        #expect(harness.wait("one")?.status == .succeeded)
        #expect(harness.executor("count") != nil)
        harness.supervisor.run(until: { harness.executor("count") == nil }, timeout: 10)
        #expect(harness.executor("count") == nil, "\(harness.log.lines)")
        #expect(harness.log.lines.contains { $0.contains("idle for 0.3 s; stopping the task executor") })
        // The next run starts one again.
        harness.start("two", task: Self.count, input: ["text": "y"])
        #expect(harness.wait("two")?.status == .succeeded)
    }

    @Test func aTasksOwnIdleTimeoutAndCancelGraceOverTheRunnersDefaults() throws {
        let harness = Harness(idleTimeout: 600, cancelGrace: 600)
        defer { harness.stop() }
        var count = Self.count
        count.idleTimeout = 0.3
        harness.start("one", task: count, input: ["text": "x"])
        #expect(harness.wait("one")?.status == .succeeded)
        harness.supervisor.run(until: { harness.executor("count") == nil }, timeout: 20)
        #expect(harness.executor("count") == nil, "\(harness.log.lines)")
        #expect(harness.log.lines.contains { $0.contains("idle for 0.3 s; stopping the task executor") })

        var faulty = Self.faulty
        faulty.cancelGrace = 0.4
        harness.start("stubborn", task: faulty, input: ["mode": "ignore_cancel", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["stubborn"]?.isEmpty == false }, timeout: 20)
        harness.cancel(runID: "stubborn", reason: .cancelled)
        let stubborn = try #require(harness.wait("stubborn", timeout: 20))
        #expect(stubborn.status == .cancelled)
        #expect(stubborn.error?.contains("did not end within 0.4 s, so its worker was killed") == true, "\(stubborn)")
    }

    @Test func shutDownInterruptsTheRunsGoing() throws {
        let harness = Harness()
        harness.start("long", task: Self.faulty, input: ["mode": "sleep", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["long"]?.isEmpty == false }, timeout: 20)
        harness.stop()
        #expect(harness.outcome("long")?.status == .interrupted)
        #expect(harness.executor("faulty")?.hasWorker != true)
    }

    @Test func aTaskTypeNoModuleProvidesFailsSayingSo() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("x", task: TaskDefinition(name: "nope", type: "sample.nothing"), input: .object([:]))
        #expect(harness.outcome("x")?.error?.contains("no enabled module provides the task type \"sample.nothing\"") == true)
    }
}

extension SupervisedProcessInfo {
    var hasWorker: Bool { pid > 0 }
}
