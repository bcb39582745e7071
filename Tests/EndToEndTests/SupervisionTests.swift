import AgentTestSupport
import CAgentSystem
import Foundation
import Testing

/// Supervision with real faults: the `faults` module's processes crash, abort, hang, ignore
/// stop requests and leave children behind, in real workers under the real agent-control.
@Suite(.ownThreads) struct SupervisionTests {
    private func agent(_ processes: String, quiet: Bool = true) throws -> AgentRun {
        try AgentRun(settings: #"{"enabled_modules": ["faults"], "processes": {\#(processes)}}"#,
                     arguments: ["--no-build", "--json"] + (quiet ? ["--quiet"] : []))
    }

    @Test func crashLoopBacksOffThenFailsAtTheStartLimit() throws {
        let run = try agent(#""loop": {"type": "fault", "mode": "exit", "after_ms": 20, "restart": {"initial_delay": 0.05, "multiplier": 2, "max_restarts": 3, "within": 60}}"#)
        let failed = run.waitForLine(onStderr: true) { $0.contains("[loop]") && $0.contains("the start limit") }
        #expect(failed?.contains("restarted 3 times within 60 s (the start limit); last: exited with status 1") == true, "\(run.transcript)")
        let delays = run.stderrLines.filter { $0.contains("[loop]") && $0.contains("restarting in") }
            .compactMap { $0.components(separatedBy: "restarting in ").last?.split(separator: " ").first }
        #expect(delays == ["0.05", "0.10", "0.20"])
        Thread.sleep(forTimeInterval: 0.4)
        #expect(run.workerPids("loop").count == 4)
        #expect(run.stop() == 0)
    }

    @Test func segfaultAndAbortAreReportedBySignalAndRestarted() throws {
        let run = try agent(#""segv": {"type": "fault", "mode": "segfault", "after_ms": 30}, "abrt": {"type": "fault", "mode": "abort", "after_ms": 30}"#)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[segv] worker pid") && $0.contains("was killed by SIGSEGV") && $0.contains("restarting in") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[abrt] worker pid") && $0.contains("was killed by SIGABRT") && $0.contains("restarting in") } != nil, "\(run.transcript)")
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[segv] ready in") }.count == 2)
        #expect(run.stop() == 0)
    }

    @Test func hungProcessIsKilledByTheWatchdogButAnIdleOneIsNot() throws {
        let run = try agent(#""hung": {"type": "fault", "mode": "hang", "after_ms": 50, "watchdog": 0.5, "restart": {"max_restarts": null}}, "idle": {"type": "fault", "mode": "healthy", "tick_ms": 6000, "watchdog": 3}"#)
        let killed = run.waitForLine(onStderr: true) { $0.contains("[hung] watchdog: no heartbeat for 0.5 s; killing it") }
        #expect(killed != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[hung] worker pid") && $0.contains("(watchdog: no heartbeat for 0.5 s)") && $0.contains("restarting in") } != nil)
        // The idle process only sleeps (6 s between ticks, past its 3 s watchdog), and the SDK
        // keeps its heartbeats going. (3 s rather than 0.5: a loaded machine delays heartbeats.)
        Thread.sleep(forTimeInterval: 4)
        #expect(!run.stderrLines.contains { $0.contains("[idle]") && $0.contains("watchdog") }, "\(run.transcript)")
        #expect(run.workerPids("idle").count == 1)
        #expect(run.stop() == 0)
    }

    @Test func processIgnoringStopIsKilledAfterItsStopTimeout() throws {
        let run = try agent(#""stubborn": {"type": "fault", "mode": "ignore_stop", "stop_timeout": 0.5}, "polite": {"type": "fault"}"#)
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("ready in") }.count == 2, "\(run.transcript)")
        Thread.sleep(forTimeInterval: 0.2)
        let started = Date()
        #expect(run.stop() == 0)
        // Until the exit, not until the pipes end: a process another test spawned meanwhile may
        // hold an inherited copy of them for a while.
        let took = (run.exitedAt ?? Date()).timeIntervalSince(started)
        #expect(run.stderrLines.contains { $0.contains("[stubborn] did not stop within 0.5 s; sending SIGKILL") }, "\(run.transcript)")
        #expect(run.stderrLines.contains { $0.contains("[stubborn] worker pid") && $0.contains("was killed by SIGKILL (stop timeout)") })
        #expect(run.stderrLines.contains { $0.contains("[polite] worker pid") && $0.contains("stopped (exited with status 0)") })
        // Far less than a stop that waited for something else than the 0.5 s (a loaded machine
        // slows the rest of it).
        #expect(took < 15, "stop took \(took) s")
    }

    @Test func workersOwnChildrenDieWithIt() throws {
        let run = try agent(#""parent": {"type": "fault", "mode": "grandchild"}"#, quiet: false)
        let line = try #require(run.waitForLine { $0.contains(#""type":"grandchild""#) }, "\(run.transcript)")
        let event = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        let grandchild = try #require((event["payload"] as? [String: Any])?["pid"] as? Int)
        #expect(AgentRun.isAlive(Int32(grandchild)))
        let worker = try #require(run.workerPids("parent").first)
        kill(worker, SIGKILL)
        let deadline = Date().addingTimeInterval(20)
        while AgentRun.isAlive(Int32(grandchild)), Date() < deadline { Thread.sleep(forTimeInterval: 0.02) }
        #expect(!AgentRun.isAlive(Int32(grandchild)), "the worker's child outlived it")
        #expect(run.stop() == 0)
    }

    @Test func restartPoliciesNeverAndOnFailureAreHonoured() throws {
        let run = try agent(#""once": {"type": "fault", "mode": "exit", "after_ms": 10, "restart": "never"}, "clean": {"type": "fault", "mode": "exit", "exit_code": 0, "after_ms": 10, "restart": "on-failure"}, "dirty": {"type": "fault", "mode": "exit", "exit_code": 3, "after_ms": 10, "restart": {"policy": "on-failure", "max_restarts": 1}}"#)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[once]") && $0.contains("restart policy is never, not restarting") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[clean]") && $0.contains("exited with status 0") && $0.contains("restart policy is on-failure, not restarting") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[dirty]") && $0.contains("exited with status 3") && $0.contains("restarting in") } != nil, "\(run.transcript)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[dirty]") && $0.contains("the start limit") } != nil, "\(run.transcript)")
        #expect(run.workerPids("once").count == 1)
        #expect(run.workerPids("clean").count == 1)
        #expect(run.workerPids("dirty").count == 2)
        #expect(run.stop() == 0)
    }
}

/// A hundred workers stop gracefully: every one answers the stop request, none needs SIGKILL.
@Suite(.ownThreads) struct ScaleTests {
    @Test func hundredWorkersStopGracefullyWithinTheStopTimeout() throws {
        // A stop timeout two cores stopping 100 workers under the suite's load stay within.
        let processes = (1...100).map { #""w\#($0)": {"type": "fault", "tick_ms": 1000, "stop_timeout": 30}"# }.joined(separator: ", ")
        let run = try AgentRun(settings: #"{"enabled_modules": ["faults"], "processes": {\#(processes)}}"#,
                               arguments: ["--no-build", "--quiet"])
        let ready = run.waitForLines(onStderr: true, count: 100, timeout: 120) { $0.contains("ready in") }
        #expect(ready.count == 100, "\(run.transcript.suffix(3000))")
        let pids = (1...100).flatMap { run.workerPids("w\($0)") }
        #expect(run.stop(timeout: 60) == 0)
        let stopped = run.stderrLines.filter { $0.contains("stopped (exited with status 0)") }
        #expect(stopped.count == 100)
        #expect(!run.stderrLines.contains { $0.contains("did not stop within") })
        #expect(!pids.contains(where: AgentRun.isAlive))
    }
}

/// After a crash, the module gets a warm spare worker that the next restart adopts.
@Suite(.ownThreads) struct WarmSpareTests {
    @Test func restartsAfterTheFirstCrashAdoptAWarmSpareAndStopLeavesNone() throws {
        let run = try AgentRun(settings: """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "loop": {"type": "fault", "mode": "exit", "after_ms": 200, "restart": {"initial_delay": 0, "max_restarts": null}}}}
        """, arguments: ["--no-build", "--quiet"])
        let adopted = run.waitForLine(onStderr: true) { $0.contains("[loop] started worker pid") && $0.contains("a warm spare") }
        #expect(adopted != nil, "\(run.transcript)")
        #expect(run.waitForLines(onStderr: true, count: 4) { $0.contains("[loop] ready in") }.count >= 4)
        // The spare got its rings when it was made: the adopted worker's frames (its ready, its
        // log lines) came through them, and no worker went without.
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[loop] exiting after tick") }.count >= 2)
        #expect(!run.stderrLines.contains { $0.contains("no shared rings") || $0.contains("gets its rings when adopted") }, "\(run.transcript)")
        let children = (try? String(contentsOfFile: "/proc/\(run.process.processIdentifier)/task/\(run.process.processIdentifier)/children", encoding: .utf8)) ?? ""
        let pids = children.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        #expect(run.stop() == 0)
        #expect(!pids.contains(where: AgentRun.isAlive), "a worker or spare outlived the stop")
    }

    /// A spare waits with what needs no start frame done — its host's writer and reader threads
    /// and its exit reaper started — and a SIGTERM still ends it at once; its reaper does not
    /// outlive it, and the next restart goes on without it.
    @Test func aSpareWaitsWithItsThreadsAndReaperStartedAndASIGTERMStillEndsIt() throws {
        let run = try AgentRun(settings: Self.tickingOne, arguments: ["--no-build", "--quiet"])
        let spare = try Self.spareAfterACrash(of: run)
        func threads() -> [String] {
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(spare)/task")) ?? []).map {
                ((try? String(contentsOfFile: "/proc/\(spare)/task/\($0)/comm", encoding: .utf8)) ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
            }
        }
        func reaper() -> Int32? {
            let children = (try? String(contentsOfFile: "/proc/\(spare)/task/\(spare)/children", encoding: .utf8)) ?? ""
            return children.split(separator: " ").compactMap { Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
                .first { ProcFacts.command($0) == "agent-exit" }
        }
        let deadline = Date().addingTimeInterval(30)
        while !(threads().contains("agent-writer") && threads().contains("agent-reader") && reaper() != nil), Date() < deadline {
            usleep(10_000)
        }
        #expect(threads().contains("agent-writer") && threads().contains("agent-reader"), "the spare's threads: \(threads())")
        let spareReaper = try #require(reaper(), "the spare has no exit reaper")
        #expect(agent_share_address_space(spare, spareReaper) == 1)
        kill(spare, SIGTERM)
        #expect(ProcFacts.survivors(of: [spare], within: 30).isEmpty, "a SIGTERM did not end the waiting spare")
        // Reaped by the supervisor (its child once the spare is dead), not left a zombie.
        let gone = Date().addingTimeInterval(30)
        while FileManager.default.fileExists(atPath: "/proc/\(spareReaper)"), Date() < gone { usleep(10_000) }
        #expect(!FileManager.default.fileExists(atPath: "/proc/\(spareReaper)"), "the dead spare's reaper was not reaped")
        // The next restart is ready (with a worker of its own, or a spare made since: the
        // second restart's may still have been due when the first spare died).
        kill(try #require(run.workerPids("one").last), SIGKILL)
        #expect(run.waitForLines(onStderr: true, count: 3) { $0.contains("[one] ready in") }.count == 3, "\(run.transcript)")
        #expect(run.workerPids("one").last != spare)
        #expect(run.stop() == 0)
    }

    /// A spare stopped by SIGSTOP would not start: the restart kills it and starts a worker of
    /// its own instead of waiting for the start timeout.
    @Test func aStoppedSpareIsNotAdopted() throws {
        let run = try AgentRun(settings: Self.tickingOne, arguments: ["--no-build", "--quiet"])
        let spare = try Self.spareAfterACrash(of: run)
        kill(spare, SIGSTOP)
        // Stopped as a whole (the parent is told once every thread has stopped, not when the
        // first one has).
        let deadline = Date().addingTimeInterval(30)
        while case let states = ProcFacts.threadStates(spare), states.isEmpty || states.contains(where: { $0 != "T" }), Date() < deadline { usleep(10_000) }
        kill(try #require(run.workerPids("one").last), SIGKILL)
        #expect(run.waitForLines(onStderr: true, count: 3) { $0.contains("[one] started worker pid") }.count == 3, "\(run.transcript)")
        let last = run.stderrLines.last { $0.contains("[one] started worker pid") }
        #expect(last?.contains("a warm spare") == false, "\(run.transcript)")
        #expect(run.waitForLines(onStderr: true, count: 3) { $0.contains("[one] ready in") }.count == 3, "\(run.transcript)")
        #expect(ProcFacts.survivors(of: [spare], within: 30).isEmpty, "the stopped spare was left")
        #expect(run.stop() == 0)
    }

    /// A warm spare gives back the code pages its start touched while it waits for a start
    /// frame: it may wait for hours, the only process mapping them.
    @Test func aWaitingSpareGivesBackItsStartsCodePages() throws {
        let kept = try AgentRun(settings: Self.tickingOne, arguments: ["--no-build", "--quiet"], environment: ["AGENT_RELEASE_START_PAGES": "0"])
        defer { _ = kept.stop(signal: SIGKILL, timeout: 10) }
        let keptKB = try StartPagesTests.codeResidentKB(of: try Self.spareAfterACrash(of: kept))
        #expect(kept.stop() == 0)

        let run = try AgentRun(settings: Self.tickingOne, arguments: ["--no-build", "--quiet"])
        defer { _ = run.stop(signal: SIGKILL, timeout: 10) }
        let spare = try Self.spareAfterACrash(of: run)
        let releasedKB = try StartPagesTests.codeResidentKBOnceReleased(ofWorker: spare, below: keptKB / 2)
        #expect(releasedKB * 2 < keptKB, "the spare's code RSS \(releasedKB) kB, \(keptKB) kB kept")
        // Adopted, it runs as any worker.
        kill(try #require(run.workerPids("one").last), SIGKILL)
        let adopted = run.waitForLine(onStderr: true) { $0.contains("[one] started worker pid \(spare)") }
        #expect(adopted?.contains("a warm spare") == true, "\(run.transcript)")
        #expect(run.waitForLines(onStderr: true, count: 3) { $0.contains("[one] ready in") }.count == 3, "\(run.transcript)")
        #expect(run.stop() == 0)
    }

    /// A reload that takes a module away ends its spare with it.
    @Test func aReloadThatDropsAModuleEndsItsSpare() throws {
        let library = try Self.module(greeting: "kept module")
        let run = try AgentRun(settings: """
        {"enabled_modules": ["faults", "\(library)"], "store": {"enabled": false}, "processes": {
          "one": {"type": "fault", "tick_ms": 200, "restart": {"initial_delay": 0, "max_restarts": null}}, "two": {"type": "idle"}}}
        """, arguments: ["--no-build", "--quiet"])
        let spare = try Self.spareAfterACrash(of: run)
        try #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"two": {"type": "idle"}}}"#
            .write(toFile: run.settingsFile, atomically: true, encoding: .utf8)
        let reload = try runProgram("agent-control", ["reload", "--settings", run.settingsFile])
        #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        #expect(ProcFacts.survivors(of: [spare], within: 30).isEmpty, "the spare of the module the reload took away is still there")
        #expect(run.stop() == 0)
    }

    /// What a dead worker leaves in the supervisor — its rings' mappings, its socket, pipes and
    /// pidfd — is freed after the restart (with the sweep), not kept: after five crashes the
    /// supervisor holds about as many descriptors and ring mappings as after the first.
    @Test func aDeadWorkersRingsAndDescriptorsAreFreedAfterItsRestart() throws {
        let run = try AgentRun(settings: Self.tickingOne, arguments: ["--no-build", "--quiet"])
        let agent = run.process.processIdentifier
        func held() -> (fds: Int, rings: Int) {
            let fds = ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent)/fd")) ?? []).count
            let maps = (try? String(contentsOfFile: "/proc/\(agent)/maps", encoding: .utf8)) ?? ""
            return (fds, maps.split(separator: "\n").filter { $0.contains("/memfd:agent-ring") }.count)
        }
        _ = try Self.spareAfterACrash(of: run)
        // Within two workers' worth of the baseline: read while the supervisor works, either
        // count may miss the spare (seen as a process before its rings are made) or hold a
        // death not swept yet (a worker's rings are 4 mappings, its descriptors about 4); five
        // crashes' leftovers kept would be 20 and 20 more.
        func settled(at baseline: (fds: Int, rings: Int)) -> Bool {
            let deadline = Date().addingTimeInterval(30)
            while Date() < deadline {
                let now = held()
                if now.fds <= baseline.fds + 8, now.rings <= baseline.rings + 8 { return true }
                usleep(20_000)
            }
            return false
        }
        let baseline = held()
        #expect(baseline.rings > 0, "no ring mapped in the supervisor")
        for crash in 3...7 {
            kill(try #require(run.workerPids("one").last), SIGKILL)
            #expect(run.waitForLines(onStderr: true, count: crash) { $0.contains("[one] ready in") }.count == crash, "\(run.transcript)")
        }
        #expect(settled(at: baseline), "after five crashes the supervisor holds \(held()), after the first \(baseline)")
        #expect(run.stop() == 0)
    }

    /// A C module of one datasource type `idle` that logs `greeting` when it runs and waits
    /// for its stop; `top` is C before the module's code (a constructor, say).
    private static func module(greeting: String, top: String = "") throws -> String {
        try CModuleFixture.greetingModule("rebuilt", type: "idle", greeting: greeting, top: top)
    }

    /// A spare made before its module was rebuilt holds the old code: the next restart starts a
    /// worker that loads the library as it is now instead.
    @Test func aSpareMadeBeforeItsModuleWasRebuiltIsNotAdopted() throws {
        let library = try Self.module(greeting: "rebuilt version 1")
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"one": {"type": "idle"}}}"#,
                               arguments: ["--no-build", "--quiet"])
        #expect(run.waitForLine(onStderr: true) { $0.contains("[one] rebuilt version 1") } != nil, "\(run.transcript)")
        // The first crash: its restart is ready, then a spare is made (the library loaded in it).
        let first = try #require(run.workerPids("one").first)
        kill(first, SIGKILL)
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[one] rebuilt version 1") }.count == 2, "\(run.transcript)")
        let spare = Self.spare(of: run)
        #expect(spare != nil, "no spare after the first crash's restart\n\(run.transcript)")
        // Rebuilt the way a build writes it: a new file renamed over the old one.
        let second = try Self.module(greeting: "rebuilt version 2")
        #expect(rename(second, library) == 0)
        let restarted = try #require(run.workerPids("one").last)
        kill(restarted, SIGKILL)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[one] rebuilt version 2") } != nil, "\(run.transcript)")
        #expect(run.stderrLines.filter { $0.contains("[one] rebuilt version 1") }.count == 2, "\(run.transcript)")
        // The worker started after the rebuild was not the spare.
        let last = run.stderrLines.last { $0.contains("[one] started worker pid") }
        #expect(last?.contains("a warm spare") == false, "\(run.transcript)")
        if let spare { #expect(!AgentRun.isAlive(spare), "the stale spare was left running") }
        #expect(run.stop() == 0)
    }

    /// A library whose constructors start a process while a worker describes it (settings
    /// check): that process goes with the describe worker, it does not outlive the describing.
    @Test func aProcessALibraryStartsWhileDescribedDoesNotOutliveTheDescribing() throws {
        let marker = "descchild\(getpid() % 10000)"
        let library = try Self.forkingWhileDescribed(greeting: "described", child: marker, leavingItsGroup: false)
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"one": {"type": "idle"}}}"#,
                               arguments: ["--no-build", "--quiet"])
        #expect(run.waitForLine(onStderr: true) { $0.contains("[one] described") } != nil, "\(run.transcript)")
        let survivors = ProcFacts.living(named: marker)
        #expect(survivors.isEmpty, "the describe worker's child \(survivors) outlived the describing")
        #expect(run.stop() == 0)
        for pid in ProcFacts.living(named: marker) { kill(pid, SIGKILL) }
    }

    /// The same during a reload's check, for a process that leaves the describe worker's group
    /// (`setsid`): the supervisor is a child subreaper by then, so the orphan is reparented to
    /// it and killed as what a dead worker left behind (console's first describe runs before
    /// that, hence the cgroup above).
    @Test func aProcessALibraryStartsWhileAReloadDescribesItEndsWithTheAgent() throws {
        let marker = "reldesc\(getpid() % 10000)"
        let library = try Self.forkingWhileDescribed(greeting: "reloaded in", child: marker, leavingItsGroup: true)
        let run = try AgentRun(settings: #"{"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {"a": {"type": "fault", "tick_ms": 200}}}"#,
                               arguments: ["--no-build", "--quiet"])
        #expect(run.waitForLine(onStderr: true) { $0.contains("[a] ready in") } != nil, "\(run.transcript)")
        try #"{"enabled_modules": ["faults", "\#(library)"], "store": {"enabled": false}, "processes": {"a": {"type": "fault", "tick_ms": 200}, "b": {"type": "idle"}}}"#
            .write(toFile: run.settingsFile, atomically: true, encoding: .utf8)
        let reload = try runProgram("agent-control", ["reload", "--settings", run.settingsFile])
        #expect(reload.status == 0, "\(reload.stdout)\(reload.stderr)")
        #expect(run.waitForLine(onStderr: true) { $0.contains("[b] reloaded in") } != nil, "\(run.transcript)")
        #expect(run.stop() == 0)
        let deadline = Date().addingTimeInterval(30)
        while !ProcFacts.living(named: marker).isEmpty, Date() < deadline { usleep(20_000) }
        let survivors = ProcFacts.living(named: marker)
        #expect(survivors.isEmpty, "the process \(survivors) a library started while a reload described it outlived the agent")
        #expect(run.stderrLines.contains { $0.contains("left behind by a dead worker") }, "\(run.transcript)")
        for pid in survivors { kill(pid, SIGKILL) }
    }

    /// A module (see ``module(greeting:top:)``) whose constructor, in a describe worker only,
    /// forks a child named `child` that waits forever — after `setsid` when `leavingItsGroup`.
    private static func forkingWhileDescribed(greeting: String, child: String, leavingItsGroup: Bool) throws -> String {
        try module(greeting: greeting, top: """
            #include <stdio.h>
            #include <sys/prctl.h>
            #include <unistd.h>
            __attribute__((constructor)) static void loaded(void) {
                char line[4096] = {0};
                FILE *file = fopen("/proc/self/cmdline", "r");
                size_t n = file ? fread(line, 1, sizeof line - 1, file) : 0;
                if (file) fclose(file);
                for (size_t i = 0; i < n; i++) if (line[i] == 0) line[i] = ' ';
                if (!strstr(line, "--describe")) return;
                /* Not described until the child has left the group: the describing kills
                   the group at its end, a child still in it with it. */
                int named[2];
                if (pipe(named) != 0) return;
                if (fork() == 0) {
                    \(leavingItsGroup ? "setsid(); " : "")prctl(PR_SET_NAME, "\(child)");
                    close(named[0]);
                    write(named[1], "n", 1);
                    close(named[1]);
                    for (;;) pause();
                }
                close(named[1]);
                char byte;
                read(named[0], &byte, 1);
                close(named[0]);
            }
            """)
    }

    /// One process `one` of the faults module that ticks and restarts at once.
    private static let tickingOne = """
        {"enabled_modules": ["faults"], "store": {"enabled": false}, "processes": {
          "one": {"type": "fault", "tick_ms": 200, "restart": {"initial_delay": 0, "max_restarts": null}}}}
        """

    /// Kills `one`'s first worker once it is ready, waits for its restart to be ready, and
    /// returns the spare made then.
    private static func spareAfterACrash(of run: AgentRun) throws -> Int32 {
        #expect(run.waitForLine(onStderr: true) { $0.contains("[one] ready in") } != nil, "\(run.transcript)")
        kill(try #require(run.workerPids("one").last), SIGKILL)
        #expect(run.waitForLines(onStderr: true, count: 2) { $0.contains("[one] ready in") }.count == 2, "\(run.transcript)")
        return try #require(spare(of: run), "no spare after the first crash's restart\n\(run.transcript)")
    }

    /// The agent's child waiting as a spare (`agent-worker --spare …`), once one is there. A
    /// spare adopted keeps its command line: one the log names as a started worker is none.
    private static func spare(of run: AgentRun, within seconds: Double = 60) -> Int32? {
        let agent = run.process.processIdentifier
        let deadline = Date().addingTimeInterval(seconds)
        repeat {
            let started = Set(run.stderrLines.compactMap { line -> Int32? in
                guard let range = line.range(of: "started worker pid ") else { return nil }
                return line[range.upperBound...].split(separator: " ").first.flatMap { Int32($0) }
            })
            let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(agent)/task")) ?? []
            let children = tasks.map { (try? String(contentsOfFile: "/proc/\(agent)/task/\($0)/children", encoding: .utf8)) ?? "" }.joined(separator: " ")
            for pid in children.split(separator: " ").compactMap({ Int32($0.trimmingCharacters(in: .whitespacesAndNewlines)) }) {
                let line = String(decoding: (FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") ?? Data()).map { $0 == 0 ? 32 : $0 }, as: UTF8.self)
                if line.hasPrefix("agent-worker --spare "), !started.contains(pid) { return pid }
            }
            usleep(20_000)
        } while Date() < deadline
        return nil
    }
}
