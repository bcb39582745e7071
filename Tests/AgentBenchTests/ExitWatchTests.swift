import AgentTestSupport
import Foundation
import Testing

@testable import agent_bench

/// Figure 3's floors under the kernel's part of a restart run real processes: /bin/sleep, and
/// a real agent-worker spare that loads the bench module and waits on its channel.
@Suite(.ownThreads) struct ExitWatchTests {
    @Test func aSpareWorkerIsKilledOnceItWaitsForItsStartFrameAndItsExitIsTimed() throws {
        let environment = try BenchEnvironment(quick: true)
        defer { environment.removeScratch() }
        let exited = ExitWatch.spareWorkerFloor(environment)
        #expect(exited != nil, "no exit time: the spare did not reach its channel read, or its pidfd never turned readable")
        #expect((exited ?? 0) > 0)
    }

    @Test func sleepIsKilledOnceAsleepAndItsExitIsTimed() {
        let exited = ExitWatch.bareProcessFloor()
        #expect(exited != nil)
        #expect((exited ?? 0) > 0)
    }
}
