import AgentTestSupport
@testable import AgentWork
import Testing

@Suite(.ownThreads) struct RunIDPrefixTests {
    @Test func aPrefixIsTheStartTimeInBase36ThenThreeRandomCharacters() {
        let prefix = RunIDPrefix.make(now: 1_764_000_000.123)
        let time = String(UInt64(1_764_000_000_123), radix: 36)
        #expect(prefix.hasPrefix(time), "\(prefix)")
        #expect(prefix.count == time.count + 3, "\(prefix)")
        #expect(prefix.allSatisfy { $0.isNumber || ("a"..."z").contains($0) }, "\(prefix)")
    }

    /// Two agents started in the same millisecond (a fleet's, sharing one runs table) were
    /// given the same run ids.
    @Test func agentsStartedInTheSameMillisecondGetDifferentPrefixes() {
        let prefixes = Set((0..<100).map { _ in RunIDPrefix.make(now: 1_764_000_000.123) })
        #expect(prefixes.count > 1, "100 prefixes made at one instant were all \(prefixes)")
    }
}
