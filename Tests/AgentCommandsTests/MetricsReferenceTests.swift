@testable import AgentCommands
import AgentTestSupport
import Foundation
import Testing

/// docs/reference/metrics.md is what the metric declarations generate, and the snapshot makes
/// only declared families.
@Suite(.ownThreads) struct MetricsReferenceTests {
    @Test func theCheckedInMetricsReferenceIsWhatTheDeclarationsGenerate() {
        CheckedInReference.expectCurrent(MetricsReference.markdown(), "metrics.md")
    }

    @Test func everyFamilyASnapshotMakesIsDeclaredOnceInItsOrder() {
        let snapshot = AgentSnapshot(pid: getpid(), takenAt: 0, uptime: 1, stopping: false, processes: [], disabled: [], store: nil, storePath: nil,
                                     outputs: [], forkServer: .null, totals: .init(), chatRequests: 0)
        let declared = MetricDeclaration.all.map(\.name)
        #expect(Set(declared).count == declared.count, "a family declared twice")
        let made = snapshot.metricFamilies.map(\.name)
        #expect(made == declared.filter(made.contains), "families not declared, or out of the declared order: \(made.filter { !declared.contains($0) })")
    }
}
