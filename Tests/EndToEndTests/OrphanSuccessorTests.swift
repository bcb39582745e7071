import AgentTestSupport
import Foundation
import Testing

/// Processes a module leaves behind that fork a successor each time one is killed: the agent
/// still stops, and none of them outlives it.
@Suite(.ownThreads) struct OrphanSuccessorTests {
    /// A module of one process type `chain`: its run starts a daemon (its own session, its
    /// descriptors closed) with a watcher child; a watcher, when its parent dies (a
    /// parent-death signal), writes a line to `successors` and forks a watcher of its own.
    /// Killing one member at a time never ends such a chain: each death starts the next.
    private static func chainModule(marker: String, successors: String, members: String) throws -> String {
        try CModuleFixture.greetingModule("chained", type: "chain", greeting: "chain started", top: """
        #include <fcntl.h>
        #include <signal.h>
        #include <stdio.h>
        #include <sys/prctl.h>
        #include <unistd.h>
        static void member(pid_t parent, int watches) {
            setsid();
            int null = open("/dev/null", O_RDWR);
            dup2(null, 0); dup2(null, 1); dup2(null, 2);
            for (int fd = 3; fd < 1024; fd++) close(fd);
            sigset_t set;
            sigemptyset(&set);
            sigaddset(&set, SIGUSR1);
            sigprocmask(SIG_BLOCK, &set, NULL);
            if (watches) {
                prctl(PR_SET_PDEATHSIG, SIGUSR1);
                /* A parent that died before the watch was set is told at once. */
                if (getppid() != parent) raise(SIGUSR1);
            }
            /* Named and written down once it watches: the test waits for both. */
            prctl(PR_SET_NAME, "\(marker)");
            pid_t self = getpid();
            char line[32];
            int length = snprintf(line, sizeof line, "%d\\n", (int)self);
            int list = open("\(members)", O_WRONLY | O_APPEND | O_CREAT, 0644);
            if (list >= 0) { write(list, line, (size_t)length); close(list); }
            if (watches) {
                int signal;
                sigwait(&set, &signal);
                int log = open("\(successors)", O_WRONLY | O_APPEND | O_CREAT, 0644);
                if (log >= 0) { write(log, "successor\\n", 10); close(log); }
            }
            if (fork() == 0) member(self, 1);
            for (;;) pause();
        }
        """, inRun: "pid_t self = getpid(); if (fork() == 0) member(self, 0);")
    }

    /// The pids the chain's members wrote down.
    private static func members(in file: String) -> [Int32] {
        ((try? String(contentsOfFile: file, encoding: .utf8)) ?? "").split(separator: "\n").compactMap { Int32($0) }
    }

    /// Ends what a failed test left: every member at once, again until none is left.
    private static func killAll(in file: String) {
        let deadline = Date().addingTimeInterval(30)
        while case let left = members(in: file).filter(ProcFacts.isAlive), !left.isEmpty, Date() < deadline {
            for pid in left { kill(pid, SIGKILL) }
            usleep(10_000)
        }
    }

    /// Runs the chain's agent until its first two members watch, stops it; what the members
    /// forked and wrote down, and the agent's log.
    private static func stopAChain(named marker: String) throws -> (successors: String, left: [Int32], log: [String]) {
        let folder = TestPaths.temporaryDirectory("successors")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let (successors, members) = (folder + "/successors", folder + "/members")
        defer { killAll(in: members) }
        let library = try chainModule(marker: marker, successors: successors, members: members)
        let run = try AgentRun(settings: #"{"enabled_modules": ["\#(library)"], "store": {"enabled": false}, "processes": {"one": {"type": "chain"}}}"#,
                               arguments: ["--no-build", "--quiet"])
        #expect(run.waitForLine(onStderr: true) { $0.contains("[one] chain started") } != nil, "\(run.transcript)")
        // The first member and its watcher, each written down once it watches.
        let watching = Date().addingTimeInterval(30)
        while Self.members(in: members).count < 2, Date() < watching { usleep(10_000) }
        #expect(Self.members(in: members).count == 2, "the chain's first two members: \(Self.members(in: members))")
        #expect(run.stop(timeout: 60) == 0, "\(run.transcript)")
        let forked = (try? String(contentsOfFile: successors, encoding: .utf8)) ?? ""
        return (forked, Self.members(in: members).filter(ProcFacts.isAlive), run.stderrLines)
    }

    /// At the stop the chain's first member is left behind; the sweep of orphans killed it,
    /// and its watcher forked a successor, which was killed in turn, and so on (until a sweep
    /// happened to kill a watcher before it forked). Each orphan is now killed with its
    /// descendants, each with SIGKILL pending before its parent dies: none forks a successor.
    @Test func anOrphanIsKilledWithWhatItStartedBeforeAnyOfThemCanForkASuccessor() throws {
        let marker = "succ\(getpid() % 100_000)"
        let stopped = try Self.stopAChain(named: marker)
        #expect(stopped.left.isEmpty, "members of the chain outlived the agent: \(stopped.left)\n\(stopped.log.joined(separator: "\n"))")
        #expect(stopped.successors.isEmpty, "successors forked: \(stopped.successors.split(separator: "\n").count)\n\(stopped.log.joined(separator: "\n"))")
        #expect(stopped.log.contains { $0.contains("(\(marker)) and the 1 process it started, left behind by a dead worker") }, "\(stopped.log.joined(separator: "\n"))")
    }

    /// An orphan that names itself like a worker's exit reaper (`agent-exit`, which the sweep
    /// ends quietly and does not wait for) is still killed with what it started: a real reaper
    /// forks nothing.
    @Test func anOrphanNamedLikeAnExitReaperIsStillKilledWithWhatItStarted() throws {
        let stopped = try Self.stopAChain(named: "agent-exit")
        #expect(stopped.left.isEmpty, "members of the chain outlived the agent: \(stopped.left)\n\(stopped.log.joined(separator: "\n"))")
        #expect(stopped.successors.isEmpty, "successors forked: \(stopped.successors.split(separator: "\n").count)\n\(stopped.log.joined(separator: "\n"))")
        #expect(stopped.log.contains { $0.contains("(agent-exit) and the 1 process it started, left behind by a dead worker") }, "\(stopped.log.joined(separator: "\n"))")
    }
}
