@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
import Foundation
import Logging
import Testing

/// Where a `command` task running /bin/true stands against the floor (a bare posix_spawn +
/// wait): printed, not judged (no timed test). Run with
/// `AGENT_COMMAND_BENCH=2000 swift test --filter CommandRunnerMeasurements`.
@Suite(.ownThreads, .enabled(if: ProcessInfo.processInfo.environment["AGENT_COMMAND_BENCH"] != nil, "set AGENT_COMMAND_BENCH=N to measure"))
struct CommandRunnerMeasurements {
    static let count = Int(ProcessInfo.processInfo.environment["AGENT_COMMAND_BENCH"] ?? "") ?? 2_000

    @Test(arguments: [false, true]) func aTrueCommandFromStartToFinishedAgainstABareSpawnAndWait(inCgroups: Bool) throws {
        // With cgroups: a run's cgroup made, the program cloned into it, the cgroup emptied and removed.
        let runDirectory = TestPaths.temporaryDirectory("command-bench-run")
        defer { try? FileManager.default.removeItem(atPath: runDirectory) }
        let containment = inCgroups ? try WorkerContainment.prepare(runDirectory: runDirectory, logger: Logger(label: "bench")) : nil
        defer { containment?.finish() }
        if inCgroups, containment?.cgroup == nil { return }
        let harness = CommandRunnerHarness("bench", containment: containment)
        let task = CommandRunnerHarness.task(["/bin/true"])
        var runner: [Double] = []
        var floor: [Double] = []
        for index in 0..<Self.count {
            var began = EventLoop.now()
            let runID = harness.start(task, runID: "bench-\(index)")
            let outcome = try #require(harness.wait(for: runID))
            runner.append(EventLoop.now() - began)
            #expect(outcome.status == .succeeded)

            began = EventLoop.now()
            let spawned = ProcessSpawner.spawn(path: "/bin/true", arguments: ["/bin/true"], environment: [:],
                                               stdout: -1, stderr: -1, channel: -1, newGroup: true)
            guard case .success(let pid) = spawned else { throw Failure(description: "spawn: \(spawned)") }
            var status: Int32 = 0
            waitpid(pid, &status, 0)
            floor.append(EventLoop.now() - began)
        }
        print("command /bin/true start → finished\(inCgroups ? " (in a cgroup of its own)" : ""): \(Self.describe(runner)); bare posix_spawn + wait: \(Self.describe(floor))")
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    static func describe(_ samples: [Double]) -> String {
        let sorted = samples.sorted()
        func at(_ fraction: Double) -> String { String(format: "%.3f ms", sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))] * 1000) }
        return "p50 \(at(0.5)), p90 \(at(0.9)), p99 \(at(0.99)) (\(sorted.count) runs)"
    }
}
