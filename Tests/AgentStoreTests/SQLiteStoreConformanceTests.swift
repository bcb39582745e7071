import AgentStore
import AgentStoreConformance
import AgentTestSupport
import AgentWork
import Foundation
import Logging
import Testing

/// The store contract (AgentStoreConformance) on the agent's own SQLite file: the same checks
/// AgentFleetTests runs on PostgreSQL.
@Suite(.ownThreads) struct SQLiteStoreConformanceTests {
    static let open: StoreFactory = {
        let folder = TestPaths.temporaryDirectory("conformance")
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let assignments = SQLiteAssignmentStore(store: store, logger: Logger(label: "test"))
        return StoresUnderTest(runs: try SQLiteRunStore(store: store), schedules: try SQLiteScheduleStore(store: store),
                               workflows: try SQLiteWorkflowStore(store: store), memory: try SQLiteMemoryStore(store: store),
                               assignments: assignments) {
            assignments.flush()
            store.close()
            try? FileManager.default.removeItem(atPath: folder)
        }
    }

    @Test(arguments: StoreContract.common + StoreContract.assignments)
    func storeContract(_ check: StoreCheck) async throws { try await check.run(Self.open) }
}
