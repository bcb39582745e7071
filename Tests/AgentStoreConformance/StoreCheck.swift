import AgentWork
import Testing

/// One implementation's stores, open on an empty database, and how to close them.
package struct StoresUnderTest: Sendable {
    package var runs: any RunStore
    package var schedules: any ScheduleStore
    package var workflows: any WorkflowStore
    package var memory: any MemoryStore
    /// The assignment choices' store, where the implementation has one (SQLite's).
    package var assignments: (any AssignmentStore)?
    package var close: @Sendable () async -> Void

    package init(runs: any RunStore, schedules: any ScheduleStore, workflows: any WorkflowStore, memory: any MemoryStore,
                 assignments: (any AssignmentStore)? = nil, close: @escaping @Sendable () async -> Void) {
        self.runs = runs
        self.schedules = schedules
        self.workflows = workflows
        self.memory = memory
        self.assignments = assignments
        self.close = close
    }
}

/// Opens a new set of stores of one implementation on an empty database (a test target's:
/// AgentStoreTests opens SQLite files, AgentFleetTests databases of a real PostgreSQL server,
/// cancelling the test when it has none).
package typealias StoreFactory = @Sendable () async throws -> StoresUnderTest

/// One clause of a store's contract: the stores' implementations each run every clause on
/// stores of their own (`@Test(arguments: StoreContract.common) func … (_ check: StoreCheck)`).
package struct StoreCheck: Sendable, CustomTestStringConvertible {
    package let name: String
    private let body: @Sendable (StoresUnderTest) async throws -> Void

    package init(_ name: String, _ body: @escaping @Sendable (StoresUnderTest) async throws -> Void) {
        self.name = name
        self.body = body
    }

    package var testDescription: String { name }

    /// Opens stores with `open`, checks this clause on them and closes them (also when it throws).
    package func run(_ open: StoreFactory) async throws {
        let stores = try await open()
        do {
            try await body(stores)
        } catch {
            await stores.close()
            throw error
        }
        await stores.close()
    }
}
