import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// A module's call whose frame the supervisor would refuse (an event, a message or a run's
/// output over 16 MiB) was answered OK, then its worker was ended for a "protocol error": the
/// call is refused now (AGENT_ERROR; a message is cut), and a too large output fails the run
/// with the reason, the worker going on.
@Suite(.ownThreads) struct ModuleFrameLimitTests {
    static let source = #"""
    #include <agent_module.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    static const agent_host_api *host;
    static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
        (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
    }
    static void *create(const char *type, const char *settings, size_t len, const agent_host_api *h, char *e, size_t el) {
        (void)settings; (void)len; (void)e; (void)el;
        host = h;
        return strcmp(type, "huge") == 0 ? (void *)2 : (void *)1;
    }
    static int32_t task_run(void *handler, const agent_task_run *r) {
        size_t size = 20u << 20;
        char *big = malloc(size);
        memset(big, 'a', size);
        char out[128];
        if (handler == (void *)2) {
            big[0] = '"'; big[size - 1] = '"';
            int32_t rc = host->task_complete(host->host_ctx, r->run_token, AGENT_OK, (const uint8_t *)big, size);
            free(big);
            return rc == AGENT_ERROR ? AGENT_OK : AGENT_ERROR;
        }
        int32_t emitted = host->emit(host->host_ctx, "big", 3, (const uint8_t *)big, size);
        host->send_message(host->host_ctx, 1, big, size);
        free(big);
        int n = snprintf(out, sizeof out, "{\"emit\": %d}", emitted);
        host->task_complete(host->host_ctx, r->run_token, AGENT_OK, (const uint8_t *)out, (size_t)n);
        return AGENT_OK;
    }
    static void task_cancel(void *handler, uint64_t token) { (void)handler; (void)token; }
    static const agent_module description = {
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
        .manifest_json = "{\"name\":\"cbig\",\"version\":\"1.0.0\",\"processes\":[{\"type\":\"probe\",\"kind\":\"task\",\"input_schema\":true},{\"type\":\"huge\",\"kind\":\"task\",\"input_schema\":true}]}",
        .run_process = run, .task_create = create, .task_run = task_run, .task_cancel = task_cancel,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """#

    /// The run `id` once it has ended (at most two minutes).
    static func ended(_ agent: AgentRun, _ id: String) throws -> JSONValue {
        let deadline = Date().addingTimeInterval(120)
        while true {
            let shown = try runProgram("agent-control", ["task", "show", id, "--json", "--settings", agent.settingsFile], timeout: 120)
            let run = (try? JSONValue.parse(Data(shown.stdout.utf8))) ?? .null
            if ["succeeded", "failed"].contains(run["status"]?.stringValue ?? "") || Date() > deadline { return run }
            Thread.sleep(forTimeInterval: 0.05)
        }
    }

    @Test func callsTooLargeForAFrameAreRefusedAndTheWorkerGoesOn() throws {
        let library = try CModuleFixture.build("cbig", source: Self.source)
        let directory = TestPaths.temporaryDirectory("frame-limits")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = #"{"enabled_modules": ["\#(library)"], "processes": {}, "tasks": {"probe": {"type": "cbig.probe"}, "huge": {"type": "cbig.huge"}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        for task in ["probe", "huge", "probe"] {
            let queued = try runProgram("agent-control", ["task", "run", task, "--settings", agent.settingsFile], timeout: 120)
            #expect(queued.status == 0, "\(queued.stderr)")
            let run = try Self.ended(agent, queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
            if task == "probe" {
                #expect(run["status"] == "succeeded", "\(run.serialized())\n\(agent.transcript)")
                // AGENT_ERROR (1).
                #expect(run["output"]?["emit"]?.numberValue?.intValue == 1, "\(run.serialized())")
            } else {
                #expect(run["status"] == "failed", "\(run.serialized())")
                #expect(run["error"]?.stringValue?.contains("a worker sends at most 16 MiB at once") == true, "\(run.serialized())")
            }
        }
        #expect(!agent.stderrLines.contains { $0.contains("protocol error") }, "\(agent.transcript)")
    }
}
