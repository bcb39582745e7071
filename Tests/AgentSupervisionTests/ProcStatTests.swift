import AgentCore
@testable import AgentSupervision
import Foundation
import Testing

/// `ProcStat.isDying` tells a process that is already on its way out (a zombie, gone, exiting
/// or with a SIGKILL pending) from one that lives on: what the stop's sweep of the agent's
/// cgroup names as left behind are only the latter.
@Suite struct ProcStatTests {
    @Test func aLivingProcessIsNotDyingAZombieAndAGoneOneAre() throws {
        var sleeper: pid_t = 0
        var child: pid_t = 0
        try ["/bin/sleep", "30"].withCStrings { try #require(posix_spawn(&sleeper, "/bin/sleep", nil, nil, $0, environ) == 0) }
        defer {
            kill(sleeper, SIGKILL)
            var status: Int32 = 0
            waitpid(sleeper, &status, 0)
        }
        #expect(!ProcStat.isDying(sleeper), "a sleeping child lives on")

        try ["/bin/true"].withCStrings { try #require(posix_spawn(&child, "/bin/true", nil, nil, $0, environ) == 0) }
        // Not reaped yet: a zombie once it has exited.
        let deadline = Date().addingTimeInterval(60)
        while ProcStat.read(child)?.state != "Z", Date() < deadline { usleep(2_000) }
        #expect(ProcStat.read(child)?.state == "Z", "the child exited")
        #expect(ProcStat.isDying(child), "a zombie is dying")
        var status: Int32 = 0
        waitpid(child, &status, 0)
        #expect(ProcStat.isDying(child), "a reaped (gone) process counts as dying")
    }
}

private extension Array where Element == String {
    /// Calls `body` with the strings as a NULL-terminated argv.
    func withCStrings<Result>(_ body: ([UnsafeMutablePointer<CChar>?]) throws -> Result) rethrows -> Result {
        let pointers = map { strdup($0) } + [nil]
        defer { pointers.forEach { free($0) } }
        return try body(pointers)
    }
}
