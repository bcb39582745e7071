import AgentTestSupport
import Foundation
import Testing

/// The fork server loads the agent's module libraries before it forks: what it loads, what it
/// refuses to keep, and a library rebuilt under it.
@Suite(.ownThreads, .serialized) struct ForkServerPreloadTests {
    private static let faults = #"{"enabled_modules": ["faults"], "processes": {"one": {"type": "fault", "tick_ms": 200}, "two": {"type": "fault", "tick_ms": 200}}}"#

    /// /proc/PID/cmdline with NULs as spaces, trailing blanks removed.
    private static func commandLine(of pid: Int32) -> String {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return String(decoding: data.map { $0 == 0 ? 32 : $0 }, as: UTF8.self).trimmingCharacters(in: .whitespaces)
    }

    private static func forkServer(of agent: AgentRun) -> Int32? {
        let pid = agent.process.processIdentifier
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []
        let children = tasks.flatMap { task in
            ((try? String(contentsOfFile: "/proc/\(pid)/task/\(task)/children", encoding: .utf8)) ?? "")
                .split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        }
        return children.first { commandLine(of: $0).contains("--fork-server") }
    }

    /// Whether `pid` was forked by the fork server (its command line was rewritten in the
    /// server's 200-byte argument area).
    private static func wasForked(_ pid: Int32) -> Bool {
        let data = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()
        return data.count > 200 && data.starts(with: Array("agent-worker".utf8))
    }

    /// Whether `pid` maps `library` (read to its end: a read of /proc/PID/maps by its size,
    /// which /proc gives as 0, stops at the first page).
    private static func maps(_ pid: Int32, _ library: String) -> Bool {
        guard let file = FileHandle(forReadingAtPath: "/proc/\(pid)/maps") else { return false }
        defer { try? file.close() }
        return String(decoding: (try? file.readToEnd()) ?? Data(), as: UTF8.self).contains(library)
    }

    /// `status --json`'s `fork_server` object.
    private static func forkServerStatus(_ agent: AgentRun) throws -> [String: Any] {
        let output = try runProgram("agent-control", ["status", "--json", "--settings", agent.settingsFile]).stdout
        let status = try JSONSerialization.jsonObject(with: Data(output.utf8)) as? [String: Any]
        return try #require(status?["fork_server"] as? [String: Any], "\(output)")
    }

    /// A C module of one datasource type `idle` that logs `greeting` when it runs and waits
    /// for its stop; `constructor` is C run when the library is loaded.
    private static func module(_ name: String, greeting: String, constructor: String = "") throws -> String {
        let manifest = #"{\"name\":\"\#(name)\",\"version\":\"1\",\"processes\":[{\"type\":\"idle\",\"kind\":\"datasource\",\"settings_schema\":{\"type\":\"object\"}}]}"#
        return try CModuleFixture.build(name, source: """
        #include <agent_module.h>
        #include <pthread.h>
        #include <signal.h>
        #include <stdlib.h>
        #include <sys/stat.h>
        #include <string.h>
        #include <unistd.h>
        static void *idle(void *unused) { (void)unused; for (;;) pause(); return 0; }
        __attribute__((constructor)) static void loaded(void) { (void)idle; \(constructor) }
        static int32_t run(const char *t, const char *n, const char *s, size_t l, const agent_host_api *h, char *e, size_t el) {
            (void)t; (void)n; (void)s; (void)l; (void)e; (void)el;
            const char *text = "\(greeting)";
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
        """, extraFlags: ["-pthread"])
    }

    @Test func theServerLoadsTheAgentsModulesBeforeItForksAndStatusNamesThem() throws {
        let agent = try AgentRun(settings: Self.faults, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        let modules = try Self.forkServerStatus(agent)["modules"] as? [String]
        #expect(modules?.count == 1 && modules?.first?.hasSuffix("/libfaults.so") == true, "\(String(describing: modules))")
        #expect(Self.maps(server, "/libfaults.so"), "the fork server has not mapped libfaults.so")
        for name in ["one", "two"] {
            let pid = try #require(agent.workerPids(name).first)
            #expect(Self.wasForked(pid), "\(name) was not forked")
        }
        #expect(agent.stop() == 0)
    }

    @Test func agentForkServerPreloadZeroLeavesTheLoadingToTheWorkers() throws {
        let agent = try AgentRun(settings: Self.faults, arguments: ["--no-build", "--quiet"], environment: ["AGENT_FORK_SERVER_PRELOAD": "0"])
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        #expect((try Self.forkServerStatus(agent)["modules"] as? [String]) == [])
        #expect(!Self.maps(server, "/libfaults.so"), "the fork server mapped libfaults.so although told not to load modules")
        let pid = try #require(agent.workerPids("one").first)
        #expect(Self.wasForked(pid) && Self.maps(pid, "/libfaults.so"))
        #expect(agent.stop() == 0)
    }

    /// A library whose constructor starts a thread would leave the server unable to fork
    /// safely: that server ends, its workers are spawned, and the next server does not load it.
    @Test func aModuleThatStartsAThreadAsItLoadsIsLeftToItsWorkers() throws {
        let library = try Self.module("threaded", greeting: "threaded runs",
                                      constructor: "pthread_t thread; if (pthread_create(&thread, 0, idle, 0) == 0) pthread_detach(thread);")
        let settings = #"{"enabled_modules": ["\#(library)"], "processes": {"one": {"type": "idle"}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] threaded runs") } != nil, "\(agent.transcript)")
        let warning = agent.waitForLine(onStderr: true) { $0.contains("started a thread (a fork server must stay single-threaded) when the fork server loaded it") && $0.contains("the next fork servers do not load it, its workers do") }
        #expect(warning?.contains(library) == true, "\(agent.transcript)")
        let first = try #require(agent.workerPids("one").first)
        #expect(!Self.wasForked(first), "the first worker was forked by a server that had another thread")
        // The next server serves without it: a restart is forked again and loads the library itself.
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("started a new fork server (pid ") } != nil, "\(agent.transcript)")
        let status = try Self.forkServerStatus(agent)
        #expect((status["modules_not_loaded"] as? [String]) == [library], "\(status)")
        #expect((status["modules"] as? [String]) == [], "\(status)")
        kill(first, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2, timeout: 30) { $0.contains("[one] threaded runs") }.count == 2, "\(agent.transcript)")
        let replacement = try #require(agent.workerPids("one").last)
        #expect(Self.wasForked(replacement), "the replacement was not forked by the new server")
        let server = try #require(Self.forkServer(of: agent))
        #expect(!Self.maps(server, library), "the new fork server loaded the library that starts a thread")
        #expect(agent.stop() == 0)
    }

    /// A library whose constructors change what a forked worker inherits (the environment, the
    /// umask, a signal's handler, the working folder) would change it for every module's
    /// workers: that server ends, and the next one does not load it. A worker of another
    /// module forked after it inherits none of it.
    @Test(arguments: [("setenv(\"PRELOAD_POLLUTED\", \"1\", 1);", "changed the environment"),
                      ("umask(0);", "changed the umask"),
                      ("signal(SIGUSR2, SIG_IGN);", "changed a signal's handler"),
                      ("if (chdir(\"/\") != 0) return;", "changed the working folder")])
    func aModuleThatChangesWhatWorkersInheritAsItLoadsIsLeftToItsWorkers(constructor: String, change: String) throws {
        let library = try Self.module("changer", greeting: "changer runs", constructor: constructor)
        let settings = #"{"enabled_modules": ["faults", "\#(library)"], "processes": {"one": {"type": "idle"}, "other": {"type": "fault", "tick_ms": 200}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        let warning = agent.waitForLine(onStderr: true) { $0.contains("\(change) when the fork server loaded it") && $0.contains("the next fork servers do not load it") }
        #expect(warning?.contains(library) == true, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] changer runs") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("started a new fork server (pid ") } != nil, "\(agent.transcript)")
        #expect((try Self.forkServerStatus(agent)["modules_not_loaded"] as? [String]) == [library])
        // The other module's next worker comes from the new server, untouched.
        let other = try #require(agent.workerPids("other").first)
        kill(other, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2, timeout: 30) { $0.contains("[other] ready in") }.count == 2, "\(agent.transcript)")
        let replacement = try #require(agent.workerPids("other").last)
        #expect(Self.wasForked(replacement))
        let environment = String(decoding: FileManager.default.contents(atPath: "/proc/\(replacement)/environ") ?? Data(), as: UTF8.self)
        #expect(!environment.contains("PRELOAD_POLLUTED"), "the other module's worker inherited the variable")
        let cwd = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(replacement)/cwd")
        #expect(cwd == (try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(agent.process.processIdentifier)/cwd")), "\(cwd)")
        #expect(agent.stop() == 0)
    }

    /// A library whose constructors take longer than the server gives a load (a second) ends
    /// that server: its workers are spawned, and the next server does not load it.
    @Test func aModuleThatTakesLongToLoadCostsOneForkServer() throws {
        let library = try Self.module("slow", greeting: "slow runs", constructor: "if (getenv(\"AGENT_SUPERVISOR_PID\")) sleep(3);")
        let settings = #"{"enabled_modules": ["\#(library)"], "processes": {"one": {"type": "idle"}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        let warning = agent.waitForLine(onStderr: true, timeout: 60) { $0.contains("the fork server failed while it was loading the module library") && $0.contains("(its constructors crashed or took over a second)") }
        #expect(warning?.contains(library) == true, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 60) { $0.contains("[one] slow runs") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("started a new fork server (pid ") } != nil, "\(agent.transcript)")
        let status = try Self.forkServerStatus(agent)
        #expect((status["modules_not_loaded"] as? [String]) == [library], "\(status)")
        #expect(agent.stop() == 0)
    }

    /// A library replaced on disk after the server loaded it: the next worker runs the new one
    /// (a dlopen in a worker forked from the old server would have returned the old code).
    @Test func aModuleRebuiltSinceTheServerLoadedItRunsAsRebuiltInItsNextWorker() throws {
        let library = try Self.module("rebuilt", greeting: "rebuilt version 1")
        let settings = #"{"enabled_modules": ["\#(library)"], "processes": {"one": {"type": "idle"}}}"#
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[one] rebuilt version 1") } != nil, "\(agent.transcript)")
        let server = try #require(Self.forkServer(of: agent))
        #expect(Self.maps(server, library), "the fork server has not mapped the module")
        // Rebuilt the way a build writes it: a new file renamed over the old one.
        let second = try Self.module("rebuilt", greeting: "rebuilt version 2")
        #expect(rename(second, library) == 0)
        let first = try #require(agent.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("[one] rebuilt version 2") } != nil, "\(agent.transcript)")
        #expect(agent.stderrLines.contains { $0.contains("the module library \(library) changed since the fork server (pid \(server)) loaded it; starting a new fork server") },
                "\(agent.transcript)")
        // The new server has the new library: the next restart is forked and runs it too.
        let newServer = try #require(Self.forkServer(of: agent))
        #expect(newServer != server)
        let replacement = try #require(agent.workerPids("one").last)
        kill(replacement, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: 2, timeout: 30) { $0.contains("[one] rebuilt version 2") }.count == 2, "\(agent.transcript)")
        let third = try #require(agent.workerPids("one").last)
        #expect(Self.wasForked(third), "the worker after the new server started was not forked")
        #expect(agent.stderrLines.filter { $0.contains("[one] rebuilt version 1") }.count == 1, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }
}
