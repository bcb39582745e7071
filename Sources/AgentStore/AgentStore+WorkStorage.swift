import AgentWork
import Logging

/// The work layer's records in the agent's store: each feature's SQLite store, opened when the
/// work layer asks (see ``WorkStorage``).
extension AgentStore: WorkStorage {
    package func openRunStore() throws -> any RunStore { try SQLiteRunStore(store: self) }

    package func openAssignmentStore(logger: Logger) -> any AssignmentStore { SQLiteAssignmentStore(store: self, logger: logger) }

    package func openScheduleStore() throws -> any ScheduleStore { try SQLiteScheduleStore(store: self) }

    package func openWorkflowStore() throws -> (store: any WorkflowStore, unfinished: [(run: WorkflowRun, steps: [WorkflowStepRecord])]) {
        let store = try SQLiteWorkflowStore(store: self)
        return (store, try store.loadUnfinishedNow())
    }

    package func openMemoryStore() throws -> any MemoryStore { try SQLiteMemoryStore(store: self) }

    // `commitEvent(type:source:time:payload:done:)` is the store's own (AgentStore.swift).
}
