import AgentTestSupport
import Foundation
import Testing

/// A module's zygote: a child of the fork server that loaded the module once and forks its
/// workers; one whose load leaves a thread or a descriptor behind is loaded by each worker.
extension ForkServerTests {
    /// A C module of one datasource type `idle` whose constructor appends its process's pid to
    /// `loads`, after `extra` (code run in the constructor too).
    private static func countingModule(loads: String, extra: String = "") throws -> String {
        let manifest = #"{\"name\":\"counted\",\"version\":\"1\",\"processes\":[{\"type\":\"idle\",\"kind\":\"datasource\",\"settings_schema\":{\"type\":\"object\"}}]}"#
        return try CModuleFixture.build("counted", source: """
        #include <agent_module.h>
        #include <fcntl.h>
        #include <pthread.h>
        #include <stdio.h>
        #include <string.h>
        #include <unistd.h>
        static void *waiting(void *unused) { (void)unused; for (;;) pause(); return NULL; }
        __attribute__((constructor)) static void loaded(void) {
            char line[32];
            int n = snprintf(line, sizeof line, "%d\\n", (int)getpid());
            int fd = open("\(loads)", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) { write(fd, line, (size_t)n); close(fd); }
            (void)waiting;
            \(extra)
        }
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)e; (void)el;
            const char *text = "counted runs";
            h->log(h->host_ctx, AGENT_LOG_INFO, text, strlen(text));
            agent_event event;
            while (h->next_event(h->host_ctx, -1, &event) != AGENT_STOPPED) {}
            return AGENT_OK;
        }
        static const agent_module description = {
            .abi_version = AGENT_MODULE_ABI_VERSION, .struct_size = sizeof(agent_module),
            .manifest_json = "\(manifest)", .run_process = run,
        };
        const agent_module *agent_module_entry(void) { return &description; }
        """)
    }

    private static func loads(_ path: String) -> [Int32] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    private static func zygotes(of agent: AgentRun) -> [Int32] {
        guard let server = forkServer(of: agent) else { return [] }
        return children(of: server).filter { commandLine(of: $0).hasPrefix("agent-worker --zygote") && AgentRun.isAlive($0) }
    }

    /// Kills `name`'s newest worker and waits for its replacement to be ready (its `count`th
    /// "runs" line); returns the replacement's pid.
    private static func restart(_ name: String, of agent: AgentRun, count: Int) throws -> Int32 {
        let old = try #require(agent.workerPids(name).last)
        kill(old, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: count) { $0.contains("[\(name)] counted runs") }.count == count, "\(agent.transcript)")
        let new = try #require(agent.workerPids(name).last)
        #expect(new != old)
        return new
    }

    @Test func aModulesWorkersAreForkedFromAZygoteThatLoadedItOnce() throws {
        let directory = TestPaths.temporaryDirectory("zygote")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let loadsFile = "\(directory)/loads"
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"a": {"type": "idle"}, "b": {"type": "idle"}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("counted runs") }.count == 2, "\(agent.transcript)")
        var zygote: Int32?
        let deadline = Date().addingTimeInterval(60)
        while zygote == nil, Date() < deadline {
            zygote = Self.zygotes(of: agent).first
            if zygote == nil { usleep(20_000) }
        }
        let found = try #require(zygote, "no zygote among the fork server's children\n\(agent.transcript)")
        #expect(Self.commandLine(of: found) == "agent-worker --zygote counted")
        #expect(Self.loads(loadsFile).contains(found), "the zygote did not load the module: \(Self.loads(loadsFile))")
        // Once the server has its zygote's word (at a request after the load), every worker of
        // the module comes from it: restarts until one runs without having loaded the library.
        var forked: Int32?
        for count in 2...6 where forked == nil {
            let pid = try Self.restart("a", of: agent, count: count)
            if !Self.loads(loadsFile).contains(pid) { forked = pid }
        }
        let worker = try #require(forked, "every replacement loaded the module itself: \(Self.loads(loadsFile))\n\(agent.transcript)")
        // Read to the end: /proc files have no size.
        let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(worker)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(maps.contains(library), "the forked worker does not map the module")
        // An adopted spare keeps the command line it was made with.
        let shown = Self.commandLine(of: worker)
        #expect(shown == "agent-worker --process a" || shown == "agent-worker --spare \(library) --module counted", "ps shows \(shown)")
        // A zygote killed: the next worker is forked as before, the module still runs.
        kill(found, SIGKILL)
        let loadedBefore = Self.loads(loadsFile).count
        _ = try Self.restart("b", of: agent, count: 2)
        #expect(Self.loads(loadsFile).count > loadedBefore, "no worker or new zygote loaded the module after the zygote died")
        #expect(agent.stop() == 0)
        #expect(!AgentRun.isAlive(found))
        for pid in Self.zygotes(of: agent) { #expect(!AgentRun.isAlive(pid), "a zygote outlived agent-control") }
    }

    @Test(arguments: ["pthread_t thread; pthread_create(&thread, NULL, waiting, NULL);", "open(\"/dev/null\", O_RDONLY);"])
    func aModuleWhoseLoadLeavesAThreadOrADescriptorIsLoadedByEachWorker(constructor: String) throws {
        let directory = TestPaths.temporaryDirectory("zygote")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let loadsFile = "\(directory)/loads"
        let library = try Self.countingModule(loads: loadsFile, extra: constructor)
        let agent = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"a": {"type": "idle"}, "b": {"type": "idle"}}}"#,
                                 arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("counted runs") }.count == 2, "\(agent.transcript)")
        // The zygote loaded the module, found it unsafe to fork from and exited; the workers
        // that come after load it themselves, each once.
        for count in 2...4 {
            let pid = try Self.restart("a", of: agent, count: count)
            #expect(Self.loads(loadsFile).contains(pid), "worker \(pid) runs a module it did not load: \(Self.loads(loadsFile))")
        }
        #expect(Self.zygotes(of: agent).isEmpty, "a zygote of a module that leaves a thread or a descriptor stays")
        #expect(agent.stop() == 0)
    }

    @Test func agentZygotesZeroLoadsTheModuleInEachWorker() throws {
        let directory = TestPaths.temporaryDirectory("zygote")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let loadsFile = "\(directory)/loads"
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"a": {"type": "idle"}, "b": {"type": "idle"}}}"#,
                                 arguments: ["--no-build", "--quiet"], environment: ["AGENT_ZYGOTES": "0"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("counted runs") }.count == 2, "\(agent.transcript)")
        let pid = try Self.restart("a", of: agent, count: 2)
        #expect(Self.loads(loadsFile).contains(pid))
        #expect(Self.zygotes(of: agent).isEmpty)
        #expect(agent.stop() == 0)
    }
}
