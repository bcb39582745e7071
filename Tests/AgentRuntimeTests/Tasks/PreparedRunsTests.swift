@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentCore
@testable import AgentRuntime

/// A run sent ahead of its instant is prepared by a module that can (`task_prepare`: the SDK
/// makes its Task and decodes its input then) and started at the instant with the other runs
/// due then (`task_start`); a module without those entry points, or one that refuses to
/// prepare a run, gets it through `task_run` at the instant. Through real executor workers.
@Suite(.ownThreads) struct PreparedRunsTests {
    static let noop = TaskDefinition(name: "noop", type: "bench.noop", maxConcurrent: 8)

    static func benchHarness() -> ModuleTaskRunnerTests.Harness {
        ModuleTaskRunnerTests.Harness(extra: [
            "bench.noop": ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "bench", library: TestPaths.products + "/libbench.so", sourceDirectory: nil),
                                                      type: "noop"),
        ])
    }

    /// The run's output has a start stamp (`started_ns`, CLOCK_REALTIME) at or after `instant`.
    static func expectStarted(_ output: JSONObject, notBefore instant: Double, run: String,
                              sourceLocation: SourceLocation = #_sourceLocation) {
        guard case .number(let number)? = output["started_ns"], let started = number.intValue else {
            Issue.record("run \(run) has no start stamp: \(output)", sourceLocation: sourceLocation)
            return
        }
        #expect(started >= Int(instant * 1e9), "run \(run) started \(Int(instant * 1e9) - started) ns before its instant",
                sourceLocation: sourceLocation)
    }

    /// Warms the executor (its worker started), so that the runs after it are held there.
    static func warm(_ harness: ModuleTaskRunnerTests.Harness, task: TaskDefinition) throws {
        harness.start("warm", task: task, input: [:])
        let warm = try #require(harness.wait("warm"), "\(harness.log.lines)")
        #expect(warm.status == .succeeded, "\(warm)")
    }

    @Test func aPreparedRunOfTheSDKStartsAtItsInstantNeverBefore() throws {
        let harness = Self.benchHarness()
        defer { harness.stop() }
        try Self.warm(harness, task: Self.noop)
        let instant = (Date().timeIntervalSince1970 + 0.4).rounded(.down) + 1
        for index in 0..<3 { harness.start("p\(index)", task: Self.noop, input: [:], notBefore: instant) }
        for index in 0..<3 {
            let outcome = try #require(harness.wait("p\(index)"), "\(harness.log.lines)")
            #expect(outcome.status == .succeeded, "\(outcome)")
            guard case .object(let output)? = outcome.output else { Issue.record("run p\(index): \(outcome)"); continue }
            Self.expectStarted(output, notBefore: instant, run: "p\(index)")
        }
    }

    @Test func aPreparedRunCancelledBeforeItsInstantNeverStarts() throws {
        let harness = Self.benchHarness()
        defer { harness.stop() }
        try Self.warm(harness, task: Self.noop)
        let instant = Date().timeIntervalSince1970 + 6
        harness.start("c1", task: Self.noop, input: [:], notBefore: instant)
        harness.start("c2", task: Self.noop, input: [:], notBefore: instant)
        // Held (and prepared) by the worker by now.
        harness.supervisor.run(until: { false }, timeout: 0.3)
        harness.cancel(runID: "c1", reason: .cancelled)
        let cancelled = try #require(harness.wait("c1"), "\(harness.log.lines)")
        #expect(cancelled.status == .cancelled, "\(cancelled)")
        #expect(cancelled.output == nil, "the handler ran: \(String(describing: cancelled.output))")
        #expect(Date().timeIntervalSince1970 < instant, "the cancel waited for the instant")
        // The other run of the same instant is not held up by it.
        let other = try #require(harness.wait("c2"), "\(harness.log.lines)")
        #expect(other.status == .succeeded, "\(other)")
    }

    @Test func aPreparedRunWhoseInputDoesNotFitFailsAtItsInstant() throws {
        let harness = Self.benchHarness()
        defer { harness.stop() }
        try Self.warm(harness, task: Self.noop)
        let instant = Date().timeIntervalSince1970 + 0.8
        harness.start("bad", task: Self.noop, input: ["sent_ns": "soon"], notBefore: instant)
        let outcome = try #require(harness.wait("bad"), "\(harness.log.lines)")
        #expect(Date().timeIntervalSince1970 >= instant, "failed before its instant")
        #expect(outcome.status == .failed)
        #expect(outcome.error?.contains("/sent_ns") == true, "\(String(describing: outcome.error))")
    }

    /// A module written in C that prepares runs: it logs each entry point the host calls,
    /// completes a started run with its start time and the number of runs started with it,
    /// refuses to prepare a run whose input is `"unprepared"` (that one comes through
    /// `task_run`), and completes a prepared run cancelled before its start itself.
    static let preparingSource = #"""
    #include <agent_module.h>
    #include <stdio.h>
    #include <string.h>
    #include <time.h>
    static const agent_host_api *host;
    static uint64_t prepared[64];
    static int preparedCount;
    static void note(const char *what, uint64_t token) {
        FILE *log = fopen(LOG_PATH, "a");
        if (log) { fprintf(log, "%s %llu\n", what, (unsigned long long)token); fclose(log); }
    }
    static long long now_ns(void) {
        struct timespec t; clock_gettime(CLOCK_REALTIME, &t);
        return (long long)t.tv_sec * 1000000000LL + t.tv_nsec;
    }
    static int take(uint64_t token) {
        for (int i = 0; i < preparedCount; i++) if (prepared[i] == token) { prepared[i] = prepared[--preparedCount]; return 1; }
        return 0;
    }
    static void finish(uint64_t token, const char *how, size_t batch) {
        char out[256];
        int n = snprintf(out, sizeof out, "{\"how\": \"%s\", \"started_ns\": %lld, \"batch\": %zu}", how, now_ns(), batch);
        host->task_complete(host->host_ctx, token, AGENT_OK, (const uint8_t *)out, (size_t)n);
    }
    static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
        (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
    }
    static void *create(const char *type, const char *settings, size_t len, const agent_host_api *h, char *e, size_t el) {
        (void)type; (void)settings; (void)len; (void)e; (void)el;
        host = h;
        return (void *)&host;
    }
    static int32_t task_run(void *handler, const agent_task_run *r) {
        (void)handler;
        note("run", r->run_token);
        finish(r->run_token, "run", 1);
        return AGENT_OK;
    }
    static int32_t task_prepare(void *handler, const agent_task_run *r) {
        (void)handler;
        if (r->input_len == 12 && memcmp(r->input_json, "\"unprepared\"", 12) == 0) { note("refused", r->run_token); return AGENT_ERROR; }
        if (preparedCount == 64) return AGENT_ERROR;
        prepared[preparedCount++] = r->run_token;
        note("prepare", r->run_token);
        return AGENT_OK;
    }
    static void task_start(void *handler, const uint64_t *tokens, size_t count) {
        (void)handler;
        for (size_t i = 0; i < count; i++) {
            if (!take(tokens[i])) continue;
            note("start", tokens[i]);
            finish(tokens[i], "start", count);
        }
    }
    static void task_cancel(void *handler, uint64_t token) {
        (void)handler;
        if (!take(token)) return;
        note("cancel", token);
        const char *why = "cancelled unstarted";
        host->task_complete(host->host_ctx, token, AGENT_ERROR, (const uint8_t *)why, strlen(why));
    }
    static const agent_module description = {
    #ifdef SHORT_STRUCT
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = offsetof(agent_module, task_prepare),
    #else
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
    #endif
        .manifest_json = "{\"name\":\"cprep\",\"version\":\"1.0.0\",\"processes\":[{\"type\":\"prep\",\"kind\":\"task\",\"input_schema\":true}]}",
        .run_process = run, .task_create = create, .task_run = task_run, .task_cancel = task_cancel,
        .task_prepare = task_prepare, .task_start = task_start,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """#

    static func preparingHarness(flags: [String] = []) throws -> (harness: ModuleTaskRunnerTests.Harness, log: String) {
        let log = TestPaths.temporaryDirectory("prepared-runs") + "/calls.log"
        let library = try CModuleFixture.build("cprep", source: Self.preparingSource, extraFlags: ["-DLOG_PATH=\"\(log)\""] + flags)
        let harness = ModuleTaskRunnerTests.Harness(extra: [
            "cprep.prep": ModuleTaskRunner.ModuleTask(module: ModuleLocation(name: "cprep", library: library, sourceDirectory: nil), type: "prep"),
        ])
        return (harness, log)
    }

    static let prep = TaskDefinition(name: "prep", type: "cprep.prep", maxConcurrent: 8)

    static func calls(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    @Test func aCModulePreparesHeldRunsAndStartsAnInstantsRunsInOneCall() throws {
        let (harness, log) = try Self.preparingHarness()
        defer { harness.stop() }
        try Self.warm(harness, task: Self.prep)
        let instant = Date().timeIntervalSince1970 + 3
        harness.start("a", task: Self.prep, input: "x", notBefore: instant)
        harness.start("b", task: Self.prep, input: "x", notBefore: instant)
        harness.start("c", task: Self.prep, input: "unprepared", notBefore: instant)
        var outputs: [String: JSONObject] = [:]
        for runID in ["a", "b", "c"] {
            let outcome = try #require(harness.wait(runID), "\(harness.log.lines)")
            #expect(outcome.status == .succeeded, "\(outcome)")
            guard case .object(let output)? = outcome.output else { Issue.record("run \(runID): \(outcome)"); continue }
            outputs[runID] = output
            Self.expectStarted(output, notBefore: instant, run: runID)
        }
        #expect(outputs["a"]?["how"] == "start" && outputs["a"]?["batch"] == 2, "\(String(describing: outputs["a"]))")
        #expect(outputs["b"]?["how"] == "start" && outputs["b"]?["batch"] == 2, "\(String(describing: outputs["b"]))")
        #expect(outputs["c"]?["how"] == "run", "a run the module refused to prepare comes through task_run: \(String(describing: outputs["c"]))")
        let entries = Self.calls(log).map { $0.split(separator: " ").first.map(String.init) ?? "" }
        // The warm-up run (not held) came through task_run; then two prepared, one refused,
        // two started and the refused one run.
        #expect(entries == ["run", "prepare", "prepare", "refused", "start", "start", "run"], "\(Self.calls(log))")
    }

    @Test func aCModulesPreparedRunCancelledBeforeItsInstantIsCancelledByTheModule() throws {
        let (harness, log) = try Self.preparingHarness()
        defer { harness.stop() }
        try Self.warm(harness, task: Self.prep)
        let instant = Date().timeIntervalSince1970 + 30
        harness.start("gone", task: Self.prep, input: "x", notBefore: instant)
        harness.supervisor.run(until: { false }, timeout: 0.3)
        harness.cancel(runID: "gone", reason: .cancelled)
        let outcome = try #require(harness.wait("gone"), "\(harness.log.lines)")
        #expect(outcome.status == .cancelled, "\(outcome)")
        #expect(Date().timeIntervalSince1970 < instant, "the cancel waited for the instant")
        let entries = Self.calls(log)
        #expect(entries.count == 3 && entries[1].hasPrefix("prepare ") && entries[2].hasPrefix("cancel "),
                "the host hands a prepared run's cancel to the module, which never starts it: \(entries)")
    }

    /// A module built before `task_prepare` and `task_start` were appended (its `struct_size`
    /// ends before them) is never asked to prepare: whatever lies past its struct is not read,
    /// and its runs sent ahead come through `task_run` at their instant.
    @Test func aModuleWhoseStructEndsBeforeThePreparingEntryPointsGetsItsRunsThroughTaskRun() throws {
        let (harness, log) = try Self.preparingHarness(flags: ["-DSHORT_STRUCT"])
        defer { harness.stop() }
        try Self.warm(harness, task: Self.prep)
        let instant = Date().timeIntervalSince1970 + 0.8
        harness.start("a", task: Self.prep, input: "x", notBefore: instant)
        harness.start("b", task: Self.prep, input: "x", notBefore: instant)
        for runID in ["a", "b"] {
            let outcome = try #require(harness.wait(runID), "\(harness.log.lines)")
            #expect(outcome.status == .succeeded, "\(outcome)")
            guard case .object(let output)? = outcome.output else { Issue.record("run \(runID): \(outcome)"); continue }
            #expect(output["how"] == "run", "\(output)")
            Self.expectStarted(output, notBefore: instant, run: runID)
        }
        #expect(Self.calls(log).map { $0.split(separator: " ").first.map(String.init) ?? "" } == ["run", "run", "run"], "\(Self.calls(log))")
    }
}
