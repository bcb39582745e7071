@testable import AgentWork
import AgentTestSupport
import Foundation
import Testing

/// Under a low `ulimit -n` every queued command failed at once ("no pipes for it (Too many open
/// files)"), for a shortage that passes. A run that cannot start for want of descriptors waits
/// and starts once there are some; one cancelled meanwhile ends cancelled. In a process of its
/// own (an exit test), whose descriptors the test may use up.
@Suite(.ownThreads) struct CommandLaunchShortageTests {
    @Test func aCommandThatLacksDescriptorsWaitsAndStartsOnceThereAreSome() async {
        await #expect(processExitsWith: .success) {
            var limit = rlimit()
            getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            limit.rlim_cur = min(limit.rlim_max, 256)
            setrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit)
            let harness = CommandRunnerHarness("shortage")
            var held: [Int32] = []
            while case let fd = open("/dev/null", O_RDONLY | O_CLOEXEC), fd >= 0 { held.append(fd) }
            guard errno == EMFILE else { exit(10) }
            let task = CommandRunnerHarness.task(["/bin/true"])
            // Ids given: a UUID needs a descriptor too.
            let waiting = harness.start(task, runID: "waiting")
            let cancelled = harness.start(task, runID: "cancelled")
            // 1.5 s: more than a try's wait; nothing ends while no descriptor is free.
            harness.turn(for: 1.5)
            guard harness.outcomes.isEmpty else { exit(11) }
            harness.onLoop { harness.runner.cancel(runID: cancelled, reason: .cancelled) }
            guard harness.wait(for: cancelled, timeout: 60)?.status == .cancelled else { exit(12) }
            for fd in held.suffix(32) { close(fd) }
            guard harness.wait(for: waiting, timeout: 60)?.status == .succeeded else { exit(13) }
            guard harness.finishCounts.values.allSatisfy({ $0 == 1 }) else { exit(14) }
            exit(0)
        }
    }
}
