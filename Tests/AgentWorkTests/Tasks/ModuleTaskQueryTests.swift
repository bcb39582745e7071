import AgentTestSupport
import Foundation
import Testing

/// The `query` host call from task handlers that run at once in one executor worker: each
/// call gets its own answer, however the calls interleave.
@Suite(.ownThreads) struct ModuleTaskQueryTests {
    /// A task handler in C whose runs each go on in a thread of their own: a run queries the
    /// store for its own run id (`SELECT ? AS v`), then waits until the other run has its answer
    /// too (at most 10 s), and only then reads its own — as a handler may hold an answer while
    /// another handler of the same worker queries. Its output: `{"rc", "answer"}`, the answer's
    /// bytes with quotes and anything unprintable as ".".
    static let source = #"""
    #include <agent_module.h>
    #include <pthread.h>
    #include <stdio.h>
    #include <stdlib.h>
    #include <string.h>
    #include <time.h>
    static const agent_host_api *host;
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
    static int answered = 0;
    struct job { uint64_t token; char id[128]; };
    static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
        (void)t; (void)n; (void)s; (void)l; (void)h; (void)e; (void)el; return AGENT_OK;
    }
    static void *create(const char *type, const char *settings, size_t len, const agent_host_api *h, char *e, size_t el) {
        (void)settings; (void)len;
        if (strcmp(type, "pair") != 0) { snprintf(e, el, "no task type %s", type); return NULL; }
        host = h;
        return (void *)&host;
    }
    static void *work(void *argument) {
        struct job *job = argument;
        const char *sql = "SELECT ? AS v";
        char params[160];
        int length = snprintf(params, sizeof params, "[\"%s\"]", job->id);
        const uint8_t *json = NULL;
        size_t size = 0;
        int32_t rc = host->query(host->host_ctx, sql, strlen(sql), params, (size_t)length, &json, &size);
        pthread_mutex_lock(&lock);
        answered += 1;
        pthread_cond_broadcast(&changed);
        struct timespec deadline;
        clock_gettime(CLOCK_REALTIME, &deadline);
        deadline.tv_sec += 10;
        while (answered < 2) { if (pthread_cond_timedwait(&changed, &lock, &deadline) != 0) break; }
        pthread_mutex_unlock(&lock);
        char out[1024];
        int n = snprintf(out, sizeof out, "{\"rc\": %d, \"answer\": \"", rc);
        for (size_t i = 0; i < size && n < (int)sizeof out - 3; i++) {
            unsigned char c = json[i];
            out[n++] = (c < 0x20 || c >= 0x7f || c == '"' || c == '\\') ? '.' : (char)c;
        }
        out[n++] = '"'; out[n++] = '}'; out[n] = 0;
        host->task_complete(host->host_ctx, job->token, AGENT_OK, (const uint8_t *)out, (size_t)n);
        free(job);
        return NULL;
    }
    static int32_t task_run(void *handler, const agent_task_run *r) {
        (void)handler;
        struct job *job = calloc(1, sizeof *job);
        job->token = r->run_token;
        snprintf(job->id, sizeof job->id, "%.*s", (int)r->run_id_len, r->run_id);
        pthread_t thread;
        if (pthread_create(&thread, NULL, work, job) != 0) { free(job); return AGENT_ERROR; }
        pthread_detach(thread);
        return AGENT_OK;
    }
    static void task_cancel(void *handler, uint64_t token) { (void)handler; (void)token; }
    static const agent_module description = {
        .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
        .manifest_json = "{\"name\":\"cquery\",\"version\":\"1.0.0\",\"processes\":[{\"type\":\"pair\",\"kind\":\"task\",\"input_schema\":true}]}",
        .run_process = run, .task_create = create, .task_run = task_run, .task_cancel = task_cancel,
    };
    const agent_module *agent_module_entry(void) { return &description; }
    """#

    static func control(_ agent: AgentRun, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", arguments + ["--settings", agent.settingsFile], timeout: 120)
    }

    @Test func twoHandlersQueryingAtOnceInOneExecutorEachGetTheirOwnAnswer() throws {
        let library = try CModuleFixture.build("cquery", source: Self.source, extraFlags: ["-pthread"])
        let directory = TestPaths.temporaryDirectory("task-query")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let settings = #"{"enabled_modules": ["\#(library)"], "processes": {}, "tasks": {"pair": {"type": "cquery.pair", "max_concurrent": 2}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--json"], directory: directory)
        defer { _ = agent.stop() }
        #expect(agent.waitForLine(onStderr: true) { $0.contains("control socket:") } != nil, "\(agent.transcript)")
        var ids: [String] = []
        for _ in 0..<2 {
            let queued = try Self.control(agent, ["task", "run", "pair", "--input", "{}"])
            #expect(queued.status == 0, "\(queued.stderr)")
            ids.append(queued.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        for id in ids {
            var run: [String: Any] = [:]
            for _ in 0..<300 {
                let shown = try Self.control(agent, ["task", "show", id, "--json"])
                run = ((try? JSONSerialization.jsonObject(with: Data(shown.stdout.utf8))) as? [String: Any]) ?? [:]
                if ["succeeded", "failed"].contains(run["status"] as? String ?? "") { break }
                Thread.sleep(forTimeInterval: 0.05)
            }
            #expect(run["status"] as? String == "succeeded", "\(run)\n\(agent.transcript)")
            let output = run["output"] as? [String: Any] ?? [:]
            #expect(output["rc"] as? Int == 0, "\(output)")
            // Its own run id came back, not the other run's nor freed memory.
            #expect(output["answer"] as? String == "[{.v.:.\(id).}]", "run \(id) read \(output)")
        }
        #expect(Set(ids).count == 2)
    }
}
