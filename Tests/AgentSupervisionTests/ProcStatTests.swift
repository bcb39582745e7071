import AgentCore
import AgentTestSupport
@testable import AgentSupervision
import Foundation
import Testing

/// `ProcStat.isDying` tells a process that is already on its way out (a zombie, gone, exiting
/// or with a SIGKILL pending) from one that lives on: what the sweeps of the agent's cgroup and
/// of the supervisor's children name as left behind are only the latter. A process whose first
/// thread exited while another runs lives on, though its stat says zombie; `cgroup.kill` alone
/// does not end it, the sweep of the cgroup does.
@Suite(.ownThreads) struct ProcStatTests {
    /// A program whose first thread exits (`pthread_exit`) while a second one waits for good;
    /// with an argument, it first moves itself into that cgroup (its `cgroup.procs`).
    static let exitedLeader = """
    #include <pthread.h>
    #include <stdio.h>
    #include <unistd.h>
    static void *waiting(void *unused) { (void)unused; for (;;) pause(); return NULL; }
    int main(int argc, char **argv) {
        if (argc > 1) {
            FILE *procs = fopen(argv[1], "w");
            if (!procs || fprintf(procs, "0\\n") < 0 || fclose(procs) != 0) return 2;
        }
        pthread_t thread;
        if (pthread_create(&thread, NULL, waiting, NULL) != 0) return 3;
        pthread_exit(NULL);
    }
    """

    /// Builds `source` into an executable; its path.
    static func program(_ source: String) throws -> String {
        let folder = TestPaths.temporaryDirectory("procstat-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try source.write(toFile: folder + "/main.c", atomically: true, encoding: .utf8)
        let cc = TestProcess()
        cc.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        cc.arguments = ["cc", "-O1", "-pthread", "-o", folder + "/main", folder + "/main.c"]
        try cc.run()
        try #require(ProcessDeadline.waitForExit(cc, within: 300, "cc") == 0, "the test program builds")
        return folder + "/main"
    }

    static func spawn(_ arguments: [String]) throws -> pid_t {
        var pid: pid_t = 0
        let pointers = arguments.map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        try #require(posix_spawn(&pid, arguments[0], nil, nil, pointers, environ) == 0)
        return pid
    }

    static func reap(_ pid: pid_t) {
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0, errno == EINTR {}
    }

    /// Waits (60 s at most) until `pid`'s first thread shows as a zombie.
    static func waitForZombieLeader(_ pid: pid_t) -> Bool {
        let deadline = Date().addingTimeInterval(60)
        while ProcStat.read(pid)?.state != "Z", Date() < deadline { usleep(2_000) }
        return ProcStat.read(pid)?.state == "Z"
    }

    @Test func aLivingProcessIsNotDyingAZombieAndAGoneOneAre() throws {
        let sleeper = try Self.spawn(["/bin/sleep", "30"])
        defer {
            kill(sleeper, SIGKILL)
            Self.reap(sleeper)
        }
        #expect(!ProcStat.isDying(sleeper), "a sleeping child lives on")
        let child = try Self.spawn(["/bin/true"])
        // Not reaped yet: a zombie once it has exited.
        #expect(Self.waitForZombieLeader(child), "the child exited")
        #expect(ProcStat.isDying(child), "a zombie is dying")
        Self.reap(child)
        #expect(ProcStat.isDying(child), "a reaped (gone) process counts as dying")
    }

    @Test func aProcessWhoseFirstThreadExitedIsNotDying() throws {
        let pid = try Self.spawn([try Self.program(Self.exitedLeader)])
        defer {
            kill(pid, SIGKILL)
            Self.reap(pid)
        }
        #expect(Self.waitForZombieLeader(pid), "the first thread exited")
        #expect(!ProcStat.isDying(pid), "its second thread runs on: the process lives")
    }

    @Test(.enabled(if: EscapedChildrenTests.cgroupsWritable)) func theSweepOfACgroupEndsAndNamesAProcessWhoseFirstThreadExited() throws {
        let own = try #require(CgroupLocation.ownCgroupDirectory())
        let cgroup = own + "/agent-test-leader-\(getpid())-\(UUID().uuidString.prefix(6))"
        try #require(mkdir(cgroup, 0o755) == 0, "a scratch cgroup")
        defer { rmdir(cgroup) }
        let pid = try Self.spawn([try Self.program(Self.exitedLeader), cgroup + "/cgroup.procs"])
        defer {
            kill(pid, SIGKILL)
            Self.reap(pid)
        }
        #expect(Self.waitForZombieLeader(pid), "the first thread exited")
        #expect(WorkerCgroup.members(cgroup) == [pid], "the program moved into the cgroup")
        let named = WorkerContainment.empty(cgroup: cgroup, timeout: 30)
        #expect(named.map(\.pid) == [pid], "the sweep names it: \(named)")
        #expect(!WorkerCgroup.isPopulated(cgroup), "and ends it")
    }

    /// A process that never stays: each generation forks the next and ends, its first thread
    /// exited (so `cgroup.kill` alone misses it), always running (so a kill by pid finds the
    /// one it listed gone and the next one born). Run under a reaper of its own outside the
    /// cgroup (each generation becomes its child), which ends once the last one is reaped.
    static let hopper = """
    #define _GNU_SOURCE
    #include <errno.h>
    #include <pthread.h>
    #include <stdio.h>
    #include <sys/prctl.h>
    #include <sys/wait.h>
    #include <unistd.h>
    /* A process that never stays: its one running thread forks a child and the process ends; the
       child's first thread exits and a second one does the same. argv[1]: the cgroup's procs file. */
    static void *hop(void *unused) {
        (void)unused;
        for (;;) {
            pid_t child = fork();
            if (child == 0) {
                pthread_t thread;
                while (pthread_create(&thread, NULL, hop, NULL) != 0) usleep(1000);
                pthread_exit(NULL);
            }
            if (child > 0) _exit(0);
            usleep(1000);
        }
        return NULL;
    }
    int main(int argc, char **argv) {
        if (argc < 2) return 2;
        /* The reaper: every generation's parent is gone, so each becomes its child. */
        prctl(PR_SET_CHILD_SUBREAPER, 1);
        pid_t first = fork();
        if (first == 0) {
            FILE *procs = fopen(argv[1], "w");
            if (!procs || fprintf(procs, "0\\n") < 0 || fclose(procs) != 0) _exit(2);
            hop(NULL);
        }
        while (wait(NULL) > 0 || errno == EINTR) {}
        return 0;
    }
    """

    @Test(.enabled(if: EscapedChildrenTests.cgroupsWritable)) func theSweepOfACgroupEndsAProcessThatForksItsNextGenerationWithoutPause() throws {
        let own = try #require(CgroupLocation.ownCgroupDirectory())
        let cgroup = own + "/agent-test-hopper-\(getpid())-\(UUID().uuidString.prefix(6))"
        try #require(mkdir(cgroup, 0o755) == 0, "a scratch cgroup")
        defer { rmdir(cgroup) }
        let reaper = try Self.spawn([try Self.program(Self.hopper), cgroup + "/cgroup.procs"])
        defer {
            // What a failed sweep left hopping.
            for _ in 0..<100 where WorkerCgroup.isPopulated(cgroup) {
                WorkerCgroup.kill(cgroup)
                usleep(10_000)
            }
            kill(reaper, SIGKILL)
            Self.reap(reaper)
        }
        let hopping = Date().addingTimeInterval(60)
        while !WorkerCgroup.isPopulated(cgroup), Date() < hopping { usleep(2_000) }
        try #require(WorkerCgroup.isPopulated(cgroup), "the hopper moved into the cgroup")
        _ = WorkerContainment.empty(cgroup: cgroup, timeout: 5)
        #expect(!WorkerCgroup.isPopulated(cgroup), "the sweep ends it")
        // Its reaper ends once the last generation is reaped.
        let reaped = Date().addingTimeInterval(60)
        var status: Int32 = 0
        while waitpid(reaper, &status, WNOHANG) == 0, Date() < reaped { usleep(5_000) }
    }
}
