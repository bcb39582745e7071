@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing
@testable import AgentRuntime
@testable import AgentCore

/// The task kind of module ABI 2, with real libraries built from C: old modules refused, task
/// declarations checked, and a C task handler run in a real executor worker.
@Suite(.ownThreads) struct ModuleTaskABITests {
    private func loadError(_ path: String) -> ModuleLoadError? {
        do {
            _ = try ModuleLoader.load(path: path, module: "old")
            return nil
        } catch {
            return error
        }
    }

    @Test func aModuleBuiltAgainstABI1IsRefusedNamingItsFileAndSayingToRebuild() throws {
        // What an ABI 1 build of a module looks like: version 1, and a struct that ends before
        // the task entry points.
        let path = try CModuleFixture.module("abi1", manifest: CModuleFixture.validManifest, abiVersion: "1",
                                             structSize: "offsetof(agent_module, task_create)")
        let error = try #require(loadError(path))
        #expect(error.code == .abiMismatch)
        #expect(error.file == path)
        #expect(error.description.contains(path))
        #expect(error.message.contains("built against module ABI 1"), "\(error)")
        #expect(error.message.contains("Rebuild it with this runtime's SDK"), "\(error)")
    }

    @Test func aTaskTypeWhoseInputSchemaDoesNotCompileIsRefusedWithItsPointer() throws {
        let manifest = #"{"name":"cmod","version":"0.1.0","processes":[{"type":"job","kind":"task","settings_schema":{"type":"object"},"input_schema":{"type":"object","properties":{"id":{"pattern":"(unclosed"}}}}]}"#
        let path = try CModuleFixture.module("badinput", manifest: manifest)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("/processes/0/input_schema/properties/id/pattern"), "\(error)")
        #expect(error.message.contains("the input schema of \"job\" does not compile"), "\(error)")
    }

    @Test func aTaskTypeWithoutTaskEntryPointsIsRefused() throws {
        let manifest = #"{"name":"cmod","version":"0.1.0","processes":[{"type":"job","kind":"task","input_schema":{"type":"object"}}]}"#
        let path = try CModuleFixture.module("notaskrun", manifest: manifest)
        let error = try #require(loadError(path))
        #expect(error.code == .invalidManifest)
        #expect(error.message.contains("declares the task type \"job\", but task_create or task_run is NULL"), "\(error)")
    }

    @Test func aTaskTypeDeclaresItsSchemasAndHeartbeatTimeoutInTheManifest() throws {
        let manifest = try ModuleManifest(json: #"{"name":"m","version":"1","processes":[{"type":"job","kind":"task","input_schema":{"type":"object","required":["a"]},"output_schema":{"type":"integer"},"heartbeat_timeout":2.5}]}"#,
                                          module: "m", file: "/x/libm.so")
        let job = try #require(manifest.processType("job"))
        #expect(job.kind == "task")
        #expect(job.inputSchema == ["type": "object", "required": ["a"]])
        #expect(job.outputSchema == ["type": "integer"])
        #expect(job.heartbeatTimeout == 2.5)
        #expect(throws: ModuleLoadError.self) {
            try ModuleManifest(json: #"{"name":"m","version":"1","processes":[{"type":"job","kind":"task","heartbeat_timeout":-1}]}"#, module: "m", file: "/x/libm.so")
        }
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
}
