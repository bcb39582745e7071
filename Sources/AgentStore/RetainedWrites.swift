import AgentWork
/// Changes of work already acknowledged (task runs' new states and results, workflow runs'
/// step logs) that the store could not write, as on a full disk. They stay in memory, in
/// order, and go first into the next transaction that is tried: once it commits, nothing
/// acknowledged was lost. Owned by the store's writer thread.
///
/// Bounded: a run's changes are folded into its latest of each attempt (the store writes only
/// the latest of each run, and of each attempt), and beyond `limit` changes the oldest give
/// way, counted in ``lost``.
package struct RetainedWrites {
    package let limit: Int
    package private(set) var runs: [TaskRun] = []
    /// Workflow changes in order, each with whether the run journal holds it too.
    private var workflowEntries: [(commit: WorkflowCommit, journaled: Bool)] = []
    package var workflows: [WorkflowCommit] { workflowEntries.map(\.commit) }
    /// Changes given up since the start because the buffer was full.
    package private(set) var lost = 0

    package init(limit: Int) { self.limit = max(1, limit) }

    package var count: Int { runs.count + workflowEntries.count }
    package var isEmpty: Bool { runs.isEmpty && workflowEntries.isEmpty }

    /// Keeps changes that could not be written (after those kept already). Returns how many
    /// went because the buffer was full. The changes of the runs in `protected`, and the
    /// workflow changes `journaled` says the run journal holds, never go: the journal's room
    /// bounds them, and the mark the next transaction writes passes their lines.
    @discardableResult
    package mutating func keep(runs newRuns: [TaskRun], workflows newCommits: [WorkflowCommit], journaled: [Bool] = [],
                               protecting protected: Set<String> = []) -> Int {
        if !newRuns.isEmpty { runs = Self.latestOfEach(runs + newRuns) }
        for (index, commit) in newCommits.enumerated() {
            workflowEntries.append((commit, index < journaled.count && journaled[index]))
        }
        var excess = count - limit
        guard excess > 0 else { return 0 }
        // The oldest step logs first: a run's own latest state says more than its step records.
        var fromWorkflows = 0
        workflowEntries.removeAll { entry in
            guard fromWorkflows < excess, !entry.journaled else { return false }
            fromWorkflows += 1
            return true
        }
        excess -= fromWorkflows
        var fromRuns = 0
        runs.removeAll { run in
            guard fromRuns < excess, !protected.contains(run.id) else { return false }
            fromRuns += 1
            return true
        }
        lost += fromWorkflows + fromRuns
        return fromWorkflows + fromRuns
    }

    /// Gives up what is kept and `more` changes: the database refused them for what they are
    /// (not for want of room), so trying them again would fail every later transaction too.
    package mutating func giveUp(more: Int) {
        lost += count + more
        clear()
    }

    /// Everything was written.
    package mutating func clear() {
        runs = []
        workflowEntries = []
    }

    /// The last change of each run's attempt (the end of an attempt is kept though the next
    /// began), in the order of those last changes.
    package static func latestOfEach(_ changes: [TaskRun]) -> [TaskRun] {
        var seen = Set<String>()
        var kept: [TaskRun] = []
        for run in changes.reversed() where seen.insert("\(run.attemptRecord?.number ?? 0) \(run.id)").inserted { kept.append(run) }
        return kept.reversed()
    }
}
