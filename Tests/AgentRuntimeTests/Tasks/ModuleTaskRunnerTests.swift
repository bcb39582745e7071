@testable import AgentBase
import AgentCore
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
        /// Every report's run, in the order they came (which run did what first).
        var order: [(runID: String, report: TaskRunReport)] = []

        init(idleTimeout: Double = 60, cancelGrace: Double = 5, startHold: Double = 0.5, extra: [String: ModuleTaskRunner.ModuleTask] = [:]) {
            let (logger, log) = OutputTestSupport.capturingLogger()
            self.log = log
            let supervisor = Supervisor.make(
                configuration: SupervisorConfiguration(workerPath: TestPaths.products + "/agent-worker", environment: ProcessInfo.processInfo.environment),
                processes: [], console: ConsoleOutput(json: false, showEvents: false, fd: -1), logger: logger)
            self.supervisor = supervisor
            runner = supervisor.inbox.isolated {
                ModuleTaskRunner(host: supervisor, configuration: .init(idleTimeout: idleTimeout, cancelGrace: cancelGrace, startHold: startHold)) { type in
                    switch type {
                    case "sample.word_count":
                        ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "sample", library: TestPaths.products + "/libsample.so", sourceDirectory: nil),
                                                    type: "word_count", heartbeatTimeout: nil)
                    case "faults.fault_task":
                        ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "faults", library: TestPaths.products + "/libfaults.so", sourceDirectory: nil),
                                                    type: "fault_task", heartbeatTimeout: 3)
                    default: extra[type]
                    }
                }
            }
        }

        func start(_ runID: String, task: TaskDefinition, input: JSONValue, attempt: Int = 1, notBefore: Double? = nil) {
            supervisor.inbox.isolated {
                runner.start(TaskRunStart(runID: runID, attempt: attempt, task: task, input: input, notBefore: notBefore)) { [unowned self] report in
                    reports[runID, default: []].append(report)
                    order.append((runID, report))
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

        /// Runs the loop until the run finished (a generous deadline: an executor's first start
        /// on a loaded machine takes long); its outcome.
        func wait(_ runID: String, timeout: Double = 60) -> TaskRunOutcome? {
            supervisor.run(until: { outcome(runID) != nil }, timeout: timeout)
            return outcome(runID)
        }

        func executor(_ task: String) -> SupervisedProcessInfo? { supervisor.process(named: "task:\(task)") }

        func stop() {
            supervisor.inbox.isolated {
                runner.shutDown()
                supervisor.stopAll()
            }
            supervisor.run(until: { supervisor.inbox.isolated { supervisor.processes.allSatisfy { !$0.hasWorker } } }, timeout: 60)
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
        harness.supervisor.run(until: { harness.executor("count")?.state == .running }, timeout: 60)
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

    /// A handler's answer is bounded as every run's output is (1 MiB, not parsed past it on the
    /// loop), and what a run keeps of its error is bounded too.
    @Test func anOutputOverOneMiBFailsTheRunAndAnErrorIsKeptToItsBound() throws {
        let harness = Harness()
        defer { harness.stop() }
        harness.start("big", task: Self.faulty, input: ["mode": "big_output"])
        let big = try #require(harness.wait("big"), "\(harness.log.lines)")
        #expect(big.status == .failed, "\(big.status)")
        #expect(big.error?.contains("the handler's output is 2097") == true, "\(big.error ?? "")")
        #expect(big.error?.contains("more than 1048576 (1 MiB), the most a run's output may have") == true, "\(big.error ?? "")")
        harness.start("error", task: Self.faulty, input: ["mode": "big_error"])
        let error = try #require(harness.wait("error"))
        #expect(error.status == .failed)
        #expect(error.error?.hasPrefix("big:eee") == true)
        #expect(error.error?.hasSuffix(" bytes in all)") == true, "\(error.error?.suffix(80) ?? "")")
        #expect((error.error?.utf8.count ?? 0) < 65_600, "\(error.error?.utf8.count ?? 0)")
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
        harness.supervisor.run(until: { (1...3).allSatisfy { harness.outcome("c\($0)") != nil } }, timeout: 60)
        let outcomes = (1...3).compactMap { harness.outcome("c\($0)") }
        #expect(outcomes.count == 3 && outcomes.allSatisfy { $0.status == .succeeded }, "\(outcomes) \(harness.log.lines)")
        #expect(Set(outcomes.compactMap { $0.output?["pid"] }).count == 1, "\(outcomes)")
        #expect(outcomes.map { $0.output?["runID"] } == ["c1", "c2", "c3"])
        #expect(outcomes.map { $0.output?["attempt"] } == [1, 2, 3])
        // At once, not one after another: each run began (its progress) before any of them
        // finished (an order, not a time: the machine may be loaded).
        let firstEnd = harness.order.firstIndex { entry in
            guard entry.runID != "warm", case .finished = entry.report else { return false }
            return true
        } ?? harness.order.endIndex
        let began = Set(harness.order[..<firstEnd].compactMap { if case .progress = $0.report { $0.runID } else { nil } })
        #expect(began.isSuperset(of: ["c1", "c2", "c3"]), "\(harness.order.map { "\($0.runID): \($0.report)" })")
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
        harness.supervisor.run(until: { harness.executor("faulty")?.state == .running }, timeout: 60)
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
        #expect(harness.wait("sleeping", timeout: 60)?.status == .failed)
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
        #expect(outcome.error == "watchdog: run hang sent no heartbeat for 3 s (the task type's heartbeat_timeout)", "\(outcome)")
        #expect(harness.log.lines.contains { $0.contains("killed by SIGKILL") && $0.contains("watchdog: run hang") }, "\(harness.log.lines)")
    }

    @Test func cancelEndsACooperativeHandlerAndKillsTheWorkerOfOneThatIgnoresItAfterTheGrace() throws {
        let harness = Harness(cancelGrace: 0.5)
        defer { harness.stop() }
        harness.start("polite", task: Self.faulty, input: ["mode": "sleep", "ms": 20_000])
        harness.supervisor.run(until: { harness.executor("faulty")?.state == .running }, timeout: 60)
        let pid = try #require(harness.executor("faulty")?.pid)
        harness.cancel(runID: "polite", reason: .cancelled)
        let polite = try #require(harness.wait("polite", timeout: 60))
        #expect(polite.status == .cancelled, "\(polite)")
        #expect(harness.executor("faulty")?.pid == pid, "a cooperative handler's worker was killed")

        harness.start("stubborn", task: Self.faulty, input: ["mode": "ignore_cancel", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["stubborn"]?.isEmpty == false }, timeout: 60)
        harness.cancel(runID: "stubborn", reason: .timedOut)
        let stubborn = try #require(harness.wait("stubborn", timeout: 60))
        #expect(stubborn.status == .timedOut)
        #expect(stubborn.error?.contains("did not end within 0.5 s, so its worker was killed") == true, "\(stubborn)")
    }

    @Test func anIdleExecutorIsStoppedAfterItsIdleTime() throws {
        let harness = Harness(idleTimeout: 0.3)
        defer { harness.stop() }
        harness.start("one", task: Self.count, input: ["text": "x"])
        #expect(harness.wait("one")?.status == .succeeded)
        #expect(harness.executor("count") != nil)
        harness.supervisor.run(until: { harness.executor("count") == nil }, timeout: 60)
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
        harness.supervisor.run(until: { harness.executor("count") == nil }, timeout: 60)
        #expect(harness.executor("count") == nil, "\(harness.log.lines)")
        #expect(harness.log.lines.contains { $0.contains("idle for 0.3 s; stopping the task executor") })

        var faulty = Self.faulty
        faulty.cancelGrace = 0.4
        harness.start("stubborn", task: faulty, input: ["mode": "ignore_cancel", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["stubborn"]?.isEmpty == false }, timeout: 60)
        harness.cancel(runID: "stubborn", reason: .cancelled)
        let stubborn = try #require(harness.wait("stubborn", timeout: 60))
        #expect(stubborn.status == .cancelled)
        #expect(stubborn.error?.contains("did not end within 0.4 s, so its worker was killed") == true, "\(stubborn)")
    }

    @Test func shutDownInterruptsTheRunsGoing() throws {
        let harness = Harness()
        harness.start("long", task: Self.faulty, input: ["mode": "sleep", "ms": 20_000])
        harness.supervisor.run(until: { harness.reports["long"]?.isEmpty == false }, timeout: 60)
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

    /// A task handler written in C: echoes its input with its run id and attempt, completing
    /// before `task_run` returns; a run whose input is `"fail"` fails.
    static let echoSource = #"""
    #include <agent_module.h>
    #include <stdio.h>
    #include <string.h>
    static const agent_host_api *host;
    static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
        (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
    }
    static void *create(const char *type, const char *settings, size_t len, const agent_host_api *h, char *e, size_t el) {
        (void)settings; (void)len;
        if (strcmp(type, "echo") != 0) { snprintf(e, el, "no task type %s", type); return NULL; }
        host = h;
        return (void *)&host;
    }
    static int32_t task_run(void *handler, const agent_task_run *r) {
        (void)handler;
        char out[4096];
        if (r->input_len == 6 && memcmp(r->input_json, "\"fail\"", 6) == 0) {
            const char *why = "echo refuses \"fail\"";
            return host->task_complete(host->host_ctx, r->run_token, AGENT_ERROR, (const uint8_t *)why, strlen(why));
        }
        host->task_progress(host->host_ctx, r->run_token, 0.5, "half", 4);
        int n = snprintf(out, sizeof out, "{\"run\": \"%s\", \"attempt\": %u, \"input\": %.*s}",
                         r->run_id, r->attempt, (int)r->input_len, (const char *)r->input_json);
        return host->task_complete(host->host_ctx, r->run_token, AGENT_OK, (const uint8_t *)out, (size_t)n);
    }
    static void task_cancel(void *handler, uint64_t token) { (void)handler; (void)token; }
    static const agent_module description = {
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
        .manifest_json = "{\"name\":\"cecho\",\"version\":\"1.0.0\",\"processes\":[{\"type\":\"echo\",\"kind\":\"task\",\"input_schema\":true}]}",
        .run_process = run, .task_create = create, .task_run = task_run, .task_cancel = task_cancel,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """#

    @Test func aTaskHandlerWrittenInCRunsInAnExecutorWorker() throws {
        let library = try CModuleFixture.build("cecho", source: Self.echoSource)
        let loaded = try ModuleLoader.load(path: library, module: "cecho")
        #expect(loaded.manifest.processType("echo")?.kind == "task")
        let harness = ModuleTaskRunnerTests.Harness(extra: [
            "cecho.echo": ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "cecho", library: library, sourceDirectory: nil), type: "echo"),
        ])
        defer { harness.stop() }
        let task = TaskDefinition(name: "echo", type: "cecho.echo")
        harness.start("e1", task: task, input: ["n": [1, 2]], attempt: 3)
        harness.start("e2", task: task, input: "fail")
        let echoed = try #require(harness.wait("e1"), "\(harness.log.lines)")
        #expect(echoed.status == .succeeded)
        #expect(echoed.output == ["run": "e1", "attempt": 3, "input": ["n": [1, 2]]])
        #expect((harness.reports["e1"] ?? []).contains { if case .progress(let fraction, let message) = $0 { fraction == 0.5 && message == "half" } else { false } })
        let failed = try #require(harness.wait("e2"))
        #expect(failed.status == .failed)
        #expect(failed.error == "echo refuses \"fail\"")
    }

    /// A C task module whose handler refuses every settings: its executor worker ends before
    /// it is ready, with the bad-settings status.
    static let refusingSource = #"""
    #include <agent_module.h>
    #include <stdio.h>
    static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
        (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
    }
    static void *create(const char *type, const char *settings, size_t len, const agent_host_api *h, char *e, size_t el) {
        (void)type; (void)h;
        snprintf(e, el, "refuses the settings %.*s", (int)len, settings);
        return NULL;
    }
    static int32_t task_run(void *handler, const agent_task_run *r) { (void)handler; (void)r; return AGENT_ERROR; }
    static void task_cancel(void *handler, uint64_t token) { (void)handler; (void)token; }
    static const agent_module description = {
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
        .manifest_json = "{\"name\":\"crefuse\",\"version\":\"1.0.0\",\"processes\":[{\"type\":\"refuse\",\"kind\":\"task\",\"input_schema\":true}]}",
        .run_process = run, .task_create = create, .task_run = task_run, .task_cancel = task_cancel,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """#

    @Test func runsOfATaskWhoseExecutorCannotStartFailWithoutAWorkerEachUntilItsHoldEnds() throws {
        let library = try CModuleFixture.build("crefuse", source: Self.refusingSource)
        // A hold no loaded machine outlasts between two lines of this test.
        let harness = ModuleTaskRunnerTests.Harness(startHold: 600, extra: [
            "crefuse.refuse": ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "crefuse", library: library, sourceDirectory: nil), type: "refuse"),
        ])
        defer { harness.stop() }
        let task = TaskDefinition(name: "refusing", type: "crefuse.refuse", settings: ["level": 1])
        harness.start("f1", task: task, input: .object([:]))
        let first = try #require(harness.wait("f1"), "\(harness.log.lines)")
        #expect(first.status == .failed)
        #expect(first.error?.contains("refuses the settings") == true, "\(first)")
        #expect(first.error?.contains("before it was ready") == true, "\(first)")
        let started = { harness.log.lines.filter { $0.contains("started worker pid") && $0.contains("from module crefuse") }.count }
        #expect(started() == 1)
        // Within the hold the next run fails at once: reported inside start, with the reason,
        // and no second worker.
        harness.start("f2", task: task, input: .object([:]))
        let second = try #require(harness.outcome("f2"), "the run was not failed at once")
        #expect(second.status == .failed)
        #expect(second.error?.contains("refuses the settings") == true, "\(second)")
        #expect(second.error?.contains("no new worker is started for this task") == true, "\(second)")
        #expect(started() == 1)
        // Another definition of the task is tried at once, with a worker of its own.
        harness.start("f3", task: TaskDefinition(name: "refusing", type: "crefuse.refuse", settings: ["level": 2]), input: .object([:]))
        #expect(harness.outcome("f3") == nil)
        let third = try #require(harness.wait("f3"), "\(harness.log.lines)")
        #expect(third.error?.contains("\"level\":2") == true || third.error?.contains("\"level\": 2") == true, "\(third)")
        #expect(started() == 2)
    }
}

extension SupervisedProcessInfo {
    var hasWorker: Bool { pid > 0 }
}
