import AgentWork
import Foundation

/// The work layer's records read from outside the agent: `agent-control task runs`, `task
/// show`, `workflow runs`, `workflow show` and `schedule history` read them here when the
/// agent is not running, with the queries the agent's own stores run.
extension StoreReader {
    /// With the runs a crash left in the run journal (newest, so first), and their records
    /// there rather than the store's older ones: the agent writes them to the store at its next start.
    package func runs(_ filter: RunFilter) throws -> RunListPage<TaskRun> {
        try SQLiteRunStore.list(filter, reader: database, journal: RunJournal.path(for: path))
    }

    package func run(id: String) throws -> TaskRun? {
        try SQLiteRunStore.readRun(id: id, reader: database, journal: RunJournal.path(for: path))
    }

    /// With the attempts' records the run journal holds (their ends on a full disk).
    package func attempts(of runID: String) throws -> [TaskAttempt] {
        try SQLiteRunStore.readAttempts(of: runID, reader: database, journal: RunJournal.path(for: path))
    }

    /// With the records the run journal holds of the runs listed (their changes on a full
    /// disk), as the next start writes them, and the runs it holds that the store lacks (begun
    /// on a full disk; newest, so first).
    package func workflowRuns(_ filter: WorkflowRunFilter) throws -> RunListPage<WorkflowRun> {
        let listed = try SQLiteWorkflowStore.list(filter, reader: database)
        let unwritten = try RunJournal.unwrittenWorkflows(path: RunJournal.path(for: path), reader: database)
        let journaled = unwritten.runs
        guard !journaled.isEmpty else { return listed }
        let new = unwritten.new.reversed().compactMap { id -> ListedRun<WorkflowRun>? in
            guard var run = journaled[id], filter.matches(run) else { return nil }
            // A list shows no definition (see SQLiteWorkflowStore.list).
            run.definition = .null
            return ListedRun(run)
        }
        let stored = listed.runs.map { entry in
            guard var newer = journaled[entry.run.id] else { return entry }
            // A list shows no definition or input: the listed record's (the journal has neither).
            newer.definition = entry.run.definition
            newer.input = entry.run.input
            var shown = entry
            shown.run = newer
            return shown
        }
        return RunListPage(Array((new + stored).prefix(max(filter.limit, 0))), cut: listed.cut)
    }

    /// With what the run journal holds of it (its changes on a full disk).
    package func workflowRun(id: String) throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? {
        let journaled = try RunJournal.unwrittenWorkflows(path: RunJournal.path(for: path), reader: database)
        guard var found = try SQLiteWorkflowStore.run(id: id, reader: database) ?? journaled.runs[id].map({ ($0, []) }) else { return nil }
        if let run = journaled.runs[id] { found.run = run }
        for step in journaled.steps[id] ?? [] {
            if let index = found.steps.firstIndex(where: { $0.stepID == step.stepID && $0.generation == step.generation }) {
                found.steps[index] = step
            } else {
                found.steps.append(step)
            }
        }
        return found
    }

    /// A schedule's history, newest first, each line with the status of the run it started
    /// (a task's or a workflow's) as the store has it.
    package func scheduleHistory(_ name: String, limit: Int) throws -> [(entry: ScheduleHistoryEntry, result: String?)] {
        try SQLiteScheduleStore.history(schedule: name, limit: limit, reader: database).map { entry in
            guard let id = entry.runID else { return (entry, nil) }
            let result = try run(id: id)?.status.rawValue ?? workflowRun(id: id)?.run.status.rawValue
            return (entry, result)
        }
    }
}
