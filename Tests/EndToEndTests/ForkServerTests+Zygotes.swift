import AgentTestSupport
import Foundation
import Testing

/// A module's zygote: a child of the fork server that loaded the module once and forks its
/// workers; one whose load leaves a thread or a descriptor behind is loaded by each worker.
extension ForkServerTests {
    /// A C module of one datasource type `idle` whose constructor appends its process's pid to
    /// `loads`, then runs `extra`; `top` is C at file scope, `greeting` what `run` logs.
    private static func countingModule(loads: String, extra: String = "", top: String = "", greeting: String = "counted runs",
                                       greetingExpression: String? = nil, extraFlags: [String] = []) throws -> String {
        try CModuleFixture.greetingModule("counted", type: "idle", greeting: greeting, greetingExpression: greetingExpression, top: """
        #include <fcntl.h>
        #include <pthread.h>
        #include <stdio.h>
        #include <sys/mman.h>
        #include <sys/prctl.h>
        #include <unistd.h>
        \(top)
        static void *waiting(void *unused) { (void)unused; for (;;) pause(); return NULL; }
        __attribute__((constructor)) static void loaded(void) {
            char line[32];
            int n = snprintf(line, sizeof line, "%d\\n", (int)getpid());
            int fd = open("\(loads)", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) { write(fd, line, (size_t)n); close(fd); }
            (void)waiting;
            \(extra)
        }
        """, extraFlags: extraFlags)
    }

    private static func loads(_ path: String) -> [Int32] {
        ((try? String(contentsOfFile: path, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Whether process `a` started after (or in the same clock tick as) process `b`: by their
    /// start times, not their pids, which wrap at pid_max (seen in CI: a worker of pid 300
    /// forked after a zygote of pid 32,6xx).
    private static func startedAfter(_ a: Int32, _ b: Int32) -> Bool {
        guard let first = ProcFacts.startTicks(a), let second = ProcFacts.startTicks(b) else { return false }
        return first >= second
    }

    private static func zygotes(of agent: AgentRun) -> [Int32] {
        guard let server = forkServer(of: agent) else { return [] }
        return children(of: server).filter { commandLine(of: $0).hasPrefix("agent-worker --zygote") && AgentRun.isAlive($0) }
    }

    /// Kills `name`'s newest worker and waits for its replacement to be ready (its `count`th
    /// line containing `line`); returns the replacement's pid.
    private static func restart(_ name: String, of agent: AgentRun, count: Int, line: String = "counted runs") throws -> Int32 {
        let old = try #require(agent.workerPids(name).last)
        kill(old, SIGKILL)
        #expect(agent.waitForLines(onStderr: true, count: count) { $0.contains("[\(name)] \(line)") }.count == count, "\(agent.transcript)")
        let new = try #require(agent.workerPids(name).last)
        #expect(new != old)
        return new
    }

    /// A fresh file for a module's constructors to write their pids to.
    private static func loadsFile() throws -> String {
        let directory = TestPaths.temporaryDirectory("zygote")
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return "\(directory)/loads"
    }

    /// An agent of two processes `a` and `b` of `library`, both running (each logged `line`).
    /// `restartedAtWill`: killed as often as a test needs, each restarted at once.
    private static func twoProcesses(of library: String, line: String = "counted runs", environment: [String: String] = [:],
                                     restartedAtWill: Bool = false) throws -> AgentRun {
        let restart = restartedAtWill ? #", "restart": {"initial_delay": 0, "max_restarts": null}"# : ""
        let agent = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"a": {"type": "idle"\#(restart)}, "b": {"type": "idle"\#(restart)}}}"#,
                                 arguments: ["--no-build", "--quiet"], environment: environment)
        #expect(agent.waitForLines(onStderr: true, count: 2) { $0.contains(line) }.count == 2, "\(agent.transcript)")
        return agent
    }

    /// Restarts `name` until a replacement did not load the library itself (it came from the
    /// zygote, once the server has the zygote's word); nil after five.
    private static func restartUntilForkedFromTheZygote(_ name: String, of agent: AgentRun, loads: String, line: String = "counted runs") throws -> Int32? {
        for count in 2...6 {
            let pid = try restart(name, of: agent, count: count, line: line)
            if !Self.loads(loads).contains(pid) { return pid }
        }
        return nil
    }

    /// Whether one of the agent's workers is a spare (made, its fork answered).
    /// Whether a spare waits to be adopted: an adopted spare keeps its `--spare` command line,
    /// so the processes' own workers are not counted (one just adopted does not say that the
    /// request for the next spare was answered).
    private static func hasSpare(_ agent: AgentRun) -> Bool {
        let workers = Set(agent.workerPids("a") + agent.workerPids("b"))
        return children(of: agent.process.processIdentifier).contains {
            !workers.contains($0) && commandLine(of: $0).hasPrefix("agent-worker --spare")
        }
    }

    /// Whether `pid` is blocked waiting for its socket (recvmsg, poll or ppoll; /proc/PID/syscall).
    private static func waitsForARequest(_ pid: Int32) -> Bool {
        let call = (try? String(contentsOfFile: "/proc/\(pid)/syscall", encoding: .utf8))?.split(separator: " ").first
        return ["47", "7", "271"].contains(call.map(String.init) ?? "")
    }

    /// Waits up to 30 s for `pid` to be gone.
    private static func expectGone(_ pid: Int32, _ why: String) {
        let deadline = Date().addingTimeInterval(30)
        while AgentRun.isAlive(pid), Date() < deadline { usleep(20_000) }
        #expect(!AgentRun.isAlive(pid), "\(why)")
    }

    /// A module written with the Swift SDK keeps its zygote: the zygote's warm-ups (the SDK's,
    /// and the runtime's lookups of a worker's start made once) start no thread and leave
    /// nothing its check refuses. A refused zygote exits at its verdict, which the supervisor
    /// logs at the next request: restarts go on until the zygote has lived 3 s past its birth
    /// (every 50 ms, without the default limit of 5 restarts a minute).
    @Test func aSwiftSDKModulesZygoteIsKeptAfterItsWarmUps() throws {
        let restart = #""restart": {"policy": "always", "initial_delay": 0.05, "multiplier": 1, "max_restarts": null}"#
        let settings = #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"a": {"type": "fault", "tick_ms": 1000, "# + restart + "}}}"
        let agent = try AgentRun(settings: settings, arguments: ["--no-build", "--quiet"])
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[a] ready in") } != nil, "\(agent.transcript)")
        let refused = { agent.stderrLines.contains { $0.contains("the zygote of module faults is not used") } }
        var zygote: (pid: Int32, seen: Date)?
        var ready = 1
        let deadline = Date().addingTimeInterval(60)
        while Date() < deadline, !refused(), zygote.map({ Date().timeIntervalSince($0.seen) < 3 }) ?? true {
            ready += 1
            _ = try Self.restart("a", of: agent, count: ready, line: "ready in")
            if zygote == nil, let pid = Self.zygotes(of: agent).first { zygote = (pid, Date()) }
        }
        #expect(!refused(), "\(agent.transcript)")
        let kept = try #require(zygote, "no zygote among the fork server's children\n\(agent.transcript)")
        #expect(AgentRun.isAlive(kept.pid) && Self.commandLine(of: kept.pid) == "agent-worker --zygote faults", "the zygote is gone\n\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    @Test func aModulesWorkersAreForkedFromAZygoteThatLoadedItOnce() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library)
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
        let worker = try #require(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile),
                                  "every replacement loaded the module itself: \(Self.loads(loadsFile))\n\(agent.transcript)")
        // Read to the end: /proc files have no size.
        let maps = String(decoding: FileHandle(forReadingAtPath: "/proc/\(worker)/maps")?.readDataToEndOfFile() ?? Data(), as: UTF8.self)
        #expect(maps.contains(library), "the forked worker does not map the module")
        // An adopted spare keeps the command line it was made with.
        let shown = Self.commandLine(of: worker)
        #expect(shown == "agent-worker --process a" || shown == "agent-worker --spare \(library) --module counted", "ps shows \(shown)")
        // A zygote killed: the next workers are forked as before, the module still runs. (The
        // first restart may adopt the spare made before; any worker made after the kill loads.)
        kill(found, SIGKILL)
        let loadedBefore = Self.loads(loadsFile).count
        _ = try Self.restart("b", of: agent, count: 2)
        _ = try Self.restart("b", of: agent, count: 3)
        #expect(Self.loads(loadsFile).count > loadedBefore, "no worker or new zygote loaded the module after the zygote died")
        #expect(agent.stop() == 0)
        #expect(!AgentRun.isAlive(found))
        for pid in Self.zygotes(of: agent) { #expect(!AgentRun.isAlive(pid), "a zygote outlived agent-control") }
    }

    @Test func aModulesWarmUpRunsOnceInItsZygoteAndInNoWorker() throws {
        let loadsFile = try Self.loadsFile()
        let warmUps = URL(fileURLWithPath: loadsFile).deletingLastPathComponent().path + "/warm-ups"
        let library = try Self.countingModule(loads: loadsFile, top: """
        void agent_module_warm_up(void) {
            printf("said-by-the-warm-up");
            char line[32];
            int n = snprintf(line, sizeof line, "%d\\n", (int)getpid());
            int fd = open("\(warmUps)", O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0600);
            if (fd >= 0) { write(fd, line, (size_t)n); close(fd); }
        }
        """)
        let agent = try Self.twoProcesses(of: library)
        let worker = try #require(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile),
                                  "every replacement loaded the module itself: \(Self.loads(loadsFile))\n\(agent.transcript)")
        let zygote = try #require(Self.zygotes(of: agent).first, "no zygote\n\(agent.transcript)")
        // The zygote warmed the module up once, not before each fork; no worker did, forked
        // from it or not. (A zygote replaced on a loaded machine would have warmed up too.)
        let warmedBy = Self.loads(warmUps)
        let workers = Set(agent.workerPids("a") + agent.workerPids("b") + [worker])
        #expect(warmedBy.filter { $0 == zygote }.count == 1, "warm-ups by \(warmedBy); the zygote is \(zygote)")
        #expect(warmedBy.allSatisfy { !workers.contains($0) }, "warm-ups by \(warmedBy); the workers are \(workers.sorted())")
        #expect(agent.stop() == 0)
        // What it left in stdio's buffer went from the zygote, not again from each worker.
        #expect(!agent.transcript.contains("said-by-the-warm-up"), "\(agent.transcript)")
    }

    /// What a constructor leaves that a worker must not inherit from a zygote, or a library's
    /// own refusal: (file scope, constructor, what the log says of it).
    static let unforkableLoads: [(String, String, String)] = [
        ("", "pthread_t thread; pthread_create(&thread, NULL, waiting, NULL);", "left a thread running"),
        ("", "open(\"/dev/null\", O_RDONLY);", "left a file descriptor open"),
        ("", "if (fork() == 0) { pause(); _exit(0); }", "started a child process"),
        ("", "setsid();", "changed the process's session, process group or child-subreaper flag"),
        ("", "prctl(PR_SET_CHILD_SUBREAPER, 1);", "changed the process's session, process group or child-subreaper flag"),
        ("int agent_module_no_zygote;", "", "it exports agent_module_no_zygote"),
        // A warm-up is checked as a constructor is.
        ("static void *waiting(void *); void agent_module_warm_up(void) { pthread_t thread; pthread_create(&thread, NULL, waiting, NULL); }", "",
         "left a thread running"),
        // Nor may it change what only the zygote's workers would inherit.
        ("void agent_module_warm_up(void) { if (chdir(\"/proc\") != 0) {} }", "", "its warm-up (agent_module_warm_up) changed the process's own state"),
        ("void agent_module_warm_up(void) { close(0); }", "", "its warm-up (agent_module_warm_up) changed the process's own state"),
        // A zygote that dies loading (here in the warm-up, which no worker runs) says nothing.
        ("void agent_module_warm_up(void) { _exit(3); }", "", "its zygote exited while loading it"),
        ("", "void *kept = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0); madvise(kept, 4096, MADV_DONTFORK);",
         "marked memory MADV_DONTFORK or MADV_WIPEONFORK"),
    ]

    @Test(arguments: Self.unforkableLoads)
    func aModuleWhoseLoadLeavesAThreadADescriptorAChildOrAnotherSessionOrThatDeclinesIsLoadedByEachWorkerAndTheLogSaysWhy(
        top: String, constructor: String, reason: String
    ) throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile, extra: constructor, top: top)
        let agent = try Self.twoProcesses(of: library, restartedAtWill: true)
        // The zygote loaded the module, found it unsafe to fork from (or was declined) and
        // exited; the workers that come after load it themselves, each once. The server tells
        // why in its reply to the first request after the zygote's verdict (the second request
        // waits 5 ms for it; later ones take it if it has come): a restart or two later.
        let told = { agent.stderrLines.filter { $0.contains("the zygote of module counted is not used:") } }
        var count = 2
        while count <= 4 || (told().isEmpty && count <= 12) {
            let pid = try Self.restart("a", of: agent, count: count)
            #expect(Self.loads(loadsFile).contains(pid), "worker \(pid) runs a module it did not load: \(Self.loads(loadsFile))")
            count += 1
        }
        #expect(Self.zygotes(of: agent).isEmpty, "a zygote of a module that it cannot fork from stays")
        #expect(told().count == 1 && told().first?.contains(reason) == true, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    @Test func aZygotesRefusalIsLoggedOnceEvenThoughANewForkServerTellsItAgain() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile, extra: "pthread_t thread; pthread_create(&thread, NULL, waiting, NULL);")
        let agent = try Self.twoProcesses(of: library, restartedAtWill: true)
        let told = { agent.stderrLines.filter { $0.contains("the zygote of module counted is not used:") } }
        var count = 2
        while told().isEmpty, count <= 8 {
            _ = try Self.restart("a", of: agent, count: count)
            count += 1
        }
        #expect(told().count == 1, "\(agent.transcript)")
        // A new fork server starts with an empty table: its zygote loads the module again and is
        // refused again, and the server tells it with a later request; the log does not repeat it.
        let server = try #require(Self.forkServer(of: agent))
        let loadedBefore = Self.loads(loadsFile)
        kill(server, SIGKILL)
        let deadline = Date().addingTimeInterval(60)
        while Self.forkServer(of: agent).map({ $0 == server }) ?? true, Date() < deadline { usleep(20_000) }
        // Restarts until the new server's zygote has loaded the module (a pid in the loads file
        // that no worker has: the zygote's), then three more, so that its refusal was asked for.
        var zygoteLoaded = false
        var after = 0
        while after < 3, count <= 20 {
            let pid = try Self.restart("a", of: agent, count: count)
            count += 1
            let workers = Set(agent.workerPids("a") + agent.workerPids("b") + [pid])
            if !zygoteLoaded { zygoteLoaded = Self.loads(loadsFile).contains { !loadedBefore.contains($0) && !workers.contains($0) } }
            if zygoteLoaded { after += 1 }
        }
        #expect(zygoteLoaded, "no new zygote loaded the module after the server was replaced\n\(agent.transcript)")
        #expect(told().count == 1, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// A library copied in place keeping its size and modification time (cp -p): its change
    /// time still tells, and the next worker runs the new code, not a zygote's old relocations.
    @Test func aLibraryRewrittenInPlaceWithItsSizeAndTimeKeptGetsANewZygote() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile, greeting: "counted runs version 1")
        let second = try Self.countingModule(loads: loadsFile, greeting: "counted runs version 2")
        let newBytes = try Data(contentsOf: URL(fileURLWithPath: second))
        var before = stat()
        #expect(stat(library, &before) == 0)
        try #require(Int(before.st_size) == newBytes.count, "the two builds differ in size")
        let agent = try Self.twoProcesses(of: library, line: "counted runs version 1")
        // Until a worker comes from the zygote (it then holds version 1's relocated data).
        #expect(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile) != nil, "no worker came from the zygote\n\(agent.transcript)")
        let zygote = try #require(Self.zygotes(of: agent).first)
        // Written into the same inode, then its size and times put back.
        let handle = try #require(FileHandle(forWritingAtPath: library))
        try handle.write(contentsOf: newBytes)
        try handle.close()
        var times = [before.st_atim, before.st_mtim]
        #expect(utimensat(AT_FDCWD, library, &times, 0) == 0)
        let old = try #require(agent.workerPids("b").last)
        kill(old, SIGKILL)
        #expect(agent.waitForLine(onStderr: true) { $0.contains("[b] counted runs version 2") } != nil, "\(agent.transcript)")
        // The zygote of the old version is ended (the text it maps is not what it relocated).
        Self.expectGone(zygote, "the zygote of the library as it was before the copy still runs")
        #expect(agent.stop() == 0)
    }

    /// The zygote forks nothing once a library the module links has changed on disk: the next
    /// worker loads the new one.
    @Test func aRebuiltLibraryTheModuleLinksEndsItsZygote() throws {
        let loadsFile = try Self.loadsFile()
        let helper = try CModuleFixture.build("helper", source: #"const char *helper_version(void) { return "helper version 1"; }"#)
        let folder = URL(fileURLWithPath: helper).deletingLastPathComponent().path
        let library = try Self.countingModule(loads: loadsFile, top: "const char *helper_version(void);", greetingExpression: "helper_version()",
                                              extraFlags: ["-L", folder, "-lhelper", "-Wl,-rpath,\(folder)"])
        let agent = try Self.twoProcesses(of: library, line: "helper version 1")
        #expect(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile, line: "helper version 1") != nil,
                "no worker came from the zygote\n\(agent.transcript)")
        let zygote = try #require(Self.zygotes(of: agent).first)
        // Rebuilt the way a build writes it: a new file renamed over the old one.
        let second = try CModuleFixture.build("helper", source: #"const char *helper_version(void) { return "helper version 2"; }"#)
        #expect(rename(second, helper) == 0)
        // A warm spare made before the rebuild may be adopted once (it checks the module's own
        // file, not what the module links): the restart after it forks a new worker.
        var updated = false
        for count in 2...3 where !updated {
            _ = try Self.restart("b", of: agent, count: count, line: "helper version")
            updated = agent.stderrLines.contains { $0.contains("[b] helper version 2") }
        }
        #expect(updated, "\(agent.transcript)")
        Self.expectGone(zygote, "the zygote of the library's old dependency still runs")
        #expect(agent.stop() == 0)
    }

    /// A zygote that does not answer (here its module's fork handler sleeps) fails one request
    /// and costs one fork server; the module's workers load it themselves from then on.
    @Test func aZygoteThatDoesNotAnswerIsAskedNoMore() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile, extra: "pthread_atfork(slowly, NULL, NULL);",
                                              top: "static void slowly(void) { sleep(3); }")
        let agent = try Self.twoProcesses(of: library)
        let failure = "the zygote of module counted failed a request"
        // Until a request reaches the zygote (its verdict read) and fails.
        var restarts = 1
        while !agent.stderrLines.contains(where: { $0.contains(failure) }), restarts < 6 {
            restarts += 1
            _ = try Self.restart("a", of: agent, count: restarts)
        }
        #expect(agent.stderrLines.contains { $0.contains(failure) }, "\(agent.transcript)")
        // The new fork server is asked for no zygote of that library: its workers start at once.
        #expect(agent.waitForLine(onStderr: true) { $0.contains("started a new fork server") } != nil, "\(agent.transcript)")
        for count in (restarts + 1)...(restarts + 3) {
            _ = try Self.restart("a", of: agent, count: count)
        }
        #expect(agent.stderrLines.filter { $0.contains(failure) }.count == 1, "\(agent.transcript)")
        #expect(agent.stderrLines.filter { $0.contains("started a new fork server") }.count == 1, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// A stopped zygote (SIGSTOP) fails the request sent to it as soon as the server finds it
    /// stopped, as one that does not answer would, and is killed: it is not left stopped.
    @Test func aStoppedZygoteFailsItsRequestAndIsKilled() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library)
        // Forked from the zygote: it is loaded and serving.
        _ = try #require(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile), "\(agent.transcript)")
        let zygote = try #require(Self.zygotes(of: agent).first, "\(agent.transcript)")
        kill(zygote, SIGSTOP)
        let old = try #require(agent.workerPids("a").last)
        kill(old, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("the zygote of module counted failed a request") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("started a new fork server") } != nil, "\(agent.transcript)")
        Self.expectGone(zygote, "the stopped zygote was left behind")
        #expect(agent.stop() == 0)
    }

    /// A zygote a debugger holds fails its request and is killed with its fork server; its
    /// death, which only the debugger can reap first, does not hold the agent's stop: the log
    /// says who holds it.
    @Test func aZygoteHeldByADebuggerDoesNotHoldTheStop() throws {
        let debugger = try DebuggerHold.make()
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library)
        _ = try #require(try Self.restartUntilForkedFromTheZygote("a", of: agent, loads: loadsFile), "\(agent.transcript)")
        let zygote = try #require(Self.zygotes(of: agent).first, "\(agent.transcript)")
        try #require(debugger.hold(zygote) == 0, "the test could not trace the zygote")
        defer { debugger.release(zygote) }
        let old = try #require(agent.workerPids("a").last)
        kill(old, SIGKILL)
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("the zygote of module counted failed a request") } != nil, "\(agent.transcript)")
        #expect(agent.waitForLine(onStderr: true, timeout: 30) { $0.contains("pid \(zygote) (") && $0.contains("is dead, but a debugger (thread ") } != nil, "\(agent.transcript)")
        #expect(agent.stop(timeout: 60) == 0, "\(agent.transcript)")
        debugger.release(zygote)
    }

    /// A warm-up that never returns (here it waits for a signal that does not come): past the
    /// load limit the server stops the zygote, whether a request comes or not, says so once
    /// (with the next request), and the workers load the module themselves, as they did
    /// meanwhile.
    @Test func aZygoteWhoseWarmUpNeverReturnsIsStoppedAtItsLoadLimitAndTheLogSaysWhy() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile, top: "void agent_module_warm_up(void) { for (;;) pause(); }")
        let agent = try Self.twoProcesses(of: library, environment: ["AGENT_ZYGOTE_LOAD_LIMIT_MS": "300"], restartedAtWill: true)
        // No request after the start's: the server ends the zygote on its own.
        let started = Date().addingTimeInterval(30)
        var zygote: Int32?
        while zygote == nil, Date() < started {
            zygote = Self.loads(loadsFile).first { Self.commandLine(of: $0).hasPrefix("agent-worker --zygote") }
            if zygote == nil { usleep(10_000) }
        }
        let stuck = try #require(zygote, "no zygote loaded the module\n\(agent.transcript)")
        Self.expectGone(stuck, "the zygote stuck in its warm-up outlived its load limit with no request")
        #expect(Self.zygotes(of: agent).isEmpty)
        let told = { agent.stderrLines.filter { $0.contains("the zygote of module counted is not used:") } }
        let deadline = Date().addingTimeInterval(60)
        var count = 2
        while told().isEmpty, Date() < deadline {
            let pid = try Self.restart("a", of: agent, count: count)
            #expect(Self.loads(loadsFile).contains(pid), "worker \(pid) runs a module it did not load: \(Self.loads(loadsFile))")
            count += 1
        }
        #expect(told().count == 1 && told().first?.contains("its load and warm-up had not finished after 0.3 s") == true, "\(agent.transcript)")
        _ = try Self.restart("a", of: agent, count: count)
        #expect(told().count == 1, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    /// A forked worker's main thread has its rseq area registered with the kernel, as glibc
    /// believes (the vfork'd middle process has none to pass on, so the worker registers it
    /// again): asked of the kernel through ptrace, from outside.
    @Test func aForkedWorkersMainThreadIsRegisteredForRestartableSequences() throws {
        let probe = try CModuleFixture.build("rseqprobe", source: """
        #define _GNU_SOURCE
        #include <errno.h>
        #include <stdint.h>
        #include <sys/ptrace.h>
        #include <sys/wait.h>
        #include <unistd.h>
        struct rseq_configuration { uint64_t pointer; uint32_t size, signature, flags, pad; };
        /* 1: registered, 0: not, -errno: could not ask. */
        int rseq_probe(int tid) {
            if (ptrace(PTRACE_SEIZE, tid, 0, 0) != 0) return -errno;
            if (ptrace(PTRACE_INTERRUPT, tid, 0, 0) != 0) { int e = errno; ptrace(PTRACE_DETACH, tid, 0, 0); return -e; }
            int status = 0;
            for (int i = 0; i < 5000 && waitpid(tid, &status, __WALL | WNOHANG) == 0; i++) usleep(1000);
            struct rseq_configuration configuration = {0};
            long n = ptrace((enum __ptrace_request)0x420f, tid, (void *)sizeof configuration, &configuration);
            int e = errno;
            ptrace(PTRACE_DETACH, tid, 0, 0);
            return n < 0 ? -e : configuration.pointer != 0;
        }
        """)
        let handle = try #require(dlopen(probe, RTLD_NOW))
        let symbol = try #require(dlsym(handle, "rseq_probe"))
        let rseqProbe = unsafeBitCast(symbol, to: (@convention(c) (Int32) -> Int32).self)
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library, restartedAtWill: true)
        // The first worker (forked by the server) and one forked from the zygote.
        let first = try #require(agent.workerPids("a").last)
        let fromZygote = try #require(try Self.restartUntilForkedFromTheZygote("b", of: agent, loads: loadsFile))
        for pid in [first, fromZygote] {
            #expect(rseqProbe(pid) == 1, "worker \(pid)'s main thread is not registered (\(rseqProbe(pid)))")
        }
        #expect(agent.stop() == 0)
    }

    /// A zygote killed while it serves is started again at the next request, twice; at its
    /// third death the library's workers load it themselves, and the log says why, once.
    @Test func aZygoteThatDiesThreeTimesWhileServingIsGivenUpAndTheLogSaysWhy() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library, restartedAtWill: true)
        let told = { agent.stderrLines.filter { $0.contains("the zygote of module counted is not used:") } }
        var count = 1
        for death in 1...3 {
            // Serving: a replacement came from the living zygote (it did not load the module
            // itself, and it is younger than the zygote: not a spare of an earlier one).
            var zygote: Int32?
            while zygote == nil, count < 40 {
                count += 1
                let pid = try Self.restart("a", of: agent, count: count)
                zygote = Self.zygotes(of: agent).first { !Self.loads(loadsFile).contains(pid) && Self.startedAfter(pid, $0) }
            }
            let serving = try #require(zygote, "no worker forked from a zygote before death \(death)\n\(agent.transcript)")
            // Killed between requests, not while it forks the spare that follows a restart's
            // ready (a request it then fails: another path, EREMOTEIO): once the spare is the
            // supervisor's child and the zygote waits for its next request.
            let idle = Date().addingTimeInterval(30)
            while !(Self.hasSpare(agent) && Self.waitsForARequest(serving)), Date() < idle { usleep(5_000) }
            #expect(Self.waitsForARequest(serving), "zygote \(serving) never waited for a request")
            kill(serving, SIGKILL)
            // Dead before the next request (a zombie until the server reaps it at that request).
            Self.expectGone(serving, "zygote \(serving) outlived SIGKILL")
        }
        // The next request to the server finds the third death (a restart may first adopt a
        // spare, which asks the server for nothing).
        var after = 0
        while told().isEmpty, after < 8 {
            count += 1
            after += 1
            _ = try Self.restart("a", of: agent, count: count)
        }
        #expect(told().count == 1 && told().first?.contains("its zygote died three times while forking workers") == true, "\(agent.transcript)")
        for _ in 1...3 {
            count += 1
            _ = try Self.restart("a", of: agent, count: count)
        }
        #expect(Self.zygotes(of: agent).isEmpty, "a zygote was started again after the third death")
        #expect(told().count == 1, "\(agent.transcript)")
        #expect(agent.stop() == 0)
    }

    @Test func agentZygotesZeroLoadsTheModuleInEachWorker() throws {
        let loadsFile = try Self.loadsFile()
        let library = try Self.countingModule(loads: loadsFile)
        let agent = try Self.twoProcesses(of: library, environment: ["AGENT_ZYGOTES": "0"])
        let pid = try Self.restart("a", of: agent, count: 2)
        #expect(Self.loads(loadsFile).contains(pid))
        #expect(Self.zygotes(of: agent).isEmpty)
        #expect(agent.stop() == 0)
    }
}
