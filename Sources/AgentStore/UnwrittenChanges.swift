/// What the store's writer knows of the changes of runs it could not write since its last
/// write (see `AgentStore.keep`): all of it is forgotten once a write succeeds.
struct UnwrittenChanges {
    /// Journaled runs not written yet: their changes are never given up (see ``RetainedWrites``).
    var journaledRuns = Set<String>()
    /// Workflow runs a kept change of which the journal could not take: their later changes
    /// are not journaled either (a journaled later step beside a lost earlier one would be a
    /// state the run never had), nor their steps' task runs (made alone at the next open, one
    /// would run for a run never made, or beside the step its run starts again).
    var unjournaledWorkflows = Set<String>()
    /// Task runs whose latest change is neither written nor in the journal: a kill loses it.
    var unkeptRuns = Set<String>()
    /// Workflow runs the store has not written whose definition and input a line carries
    /// already: later lines leave them out (each would take up to a MiB more of the room).
    var unstoredJournaled = Set<String>()
    /// The last line of the journal that holds a kept change: marked once written.
    var keptLine: UInt64 = 0

    /// A write succeeded: everything kept is written.
    mutating func written() { self = UnwrittenChanges() }
}
