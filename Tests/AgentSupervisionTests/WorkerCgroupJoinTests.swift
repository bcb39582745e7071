import AgentCore
import AgentTestSupport
@testable import AgentSupervision
import Foundation
import Testing

/// `WorkerCgroup.join` skips the write to `cgroup.procs` (a migration that waits for the
/// kernel's cgroup locks) only when the process is in that very cgroup: the membership check
/// must say yes for the cgroup a process is in and no for any other, or a worker would run
/// outside the agent's cgroup.
@Suite(.ownThreads) struct WorkerCgroupJoinTests {
    @Test func theMembershipCheckNamesTheCgroupAProcessIsInAndNoOther() throws {
        guard let own = CgroupLocation.ownCgroupDirectory() else {
            // No cgroup2 mount here: join is never called (workers run without a cgroup).
            return
        }
        let sleeper = TestProcess()
        sleeper.executableURL = URL(fileURLWithPath: "/bin/sleep")
        sleeper.arguments = ["30"]
        try sleeper.run()
        // SIGKILL: whatever the child does with SIGTERM.
        defer { kill(sleeper.processIdentifier, SIGKILL); sleeper.waitUntilExit() }
        let child = sleeper.processIdentifier
        #expect(WorkerCgroup.holds(getpid(), cgroup: own))
        #expect(WorkerCgroup.holds(child, cgroup: own))
        // Joining the cgroup it is in changes nothing and reports success.
        #expect(WorkerCgroup.join(own) == 0)
        #expect(WorkerCgroup.holds(getpid(), cgroup: own))
        #expect(!WorkerCgroup.holds(getpid(), cgroup: own + "/no-such-cgroup"))
        // A cgroup beside it, made for the test where the hierarchy is writable, holds neither.
        let other = own + "/agent-test-\(getpid())"
        guard mkdir(other, 0o755) == 0 else { return }
        defer { rmdir(other) }
        #expect(!WorkerCgroup.holds(getpid(), cgroup: other))
        #expect(!WorkerCgroup.holds(child, cgroup: other))
    }
}
