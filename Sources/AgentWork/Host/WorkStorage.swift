import Logging

/// The agent's own store (SQLite) as the work layer opens its records in it: each call opens
/// one feature's store, or throws why it cannot (the feature then keeps its records in memory
/// and says so). `AgentStore` conforms (in AgentStore); an agent in a fleet keeps runs,
/// schedules, workflows and memory in the fleet's ``FleetBackend`` instead.
package protocol WorkStorage: AnyObject {
    func openRunStore() throws -> any RunStore
    /// The assignment strategies and drains kept across restarts (local even in a fleet).
    func openAssignmentStore(logger: Logger) -> any AssignmentStore
    func openScheduleStore() throws -> any ScheduleStore
    /// The workflow store, and the runs a previous life of the agent left unfinished (read now,
    /// before the loop runs).
    func openWorkflowStore() throws -> (store: any WorkflowStore, unfinished: [(run: WorkflowRun, steps: [WorkflowStepRecord])])
    func openMemoryStore() throws -> any MemoryStore
    /// Commits an event to the event log at once; `done` (any thread) says whether it was
    /// written: a published event is answered only once it is (see `WorkHost+Intake`).
    func commitEvent(type: String, source: String, time: Double, payload: [UInt8], done: @escaping @Sendable (Bool) -> Void)
}
