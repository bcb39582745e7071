@testable import AgentBase
import AgentTestSupport
import Foundation
import Testing

/// What large values let go is given back to the system: one trim, off the caller's thread,
/// once enough was released, for a whole burst of releases.
@Suite(.ownThreads) struct HeapTrimTests {
    @Test func releasesPastTheThresholdAreGivenBackByOneTrimForTheBurst() async throws {
        let trim = HeapTrim()
        trim.released(HeapTrim.threshold - 1)
        #expect(trim.trims == 0)
        trim.released(1)
        trim.released(10 << 20)
        let deadline = Date().addingTimeInterval(60)
        while trim.trims == 0, Date() < deadline { try await Task.sleep(for: .milliseconds(20)) }
        #expect(trim.trims == 1)
        #expect(trim.scheduled == 1, "the burst waits for the one trim a second after it began")
    }
}
