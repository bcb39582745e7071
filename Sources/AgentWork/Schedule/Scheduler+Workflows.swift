import Foundation
import JSONSchema

/// Schedules that start workflows (`"run": {"workflow": NAME, "input": …}`): a fire prepares a
/// run of the workflow, commits it in the fire's own transaction (with the schedule's state and
/// history line, as a task run is), and hands it to the ``WorkflowEngine`` once committed. After
/// a crash the run is either committed with its fire — and the engine resumes it with the
/// other unfinished runs — or not at all, and the fire time is owed per `catch_up`.
///
/// Such a fire is not decided ahead (see Scheduler+Ahead.swift): a workflow run has no
/// not-before, so it is decided at its instant and starts once committed.
extension Scheduler {
    /// A new run of `workflow` for a fire (nil: the agent runs no such workflow).
    package func prepareWorkflowRun(_ workflow: String, input: JSONValue) -> WorkflowRun? {
        guard let workflows, let definition = workflows.definitions[workflow] else { return nil }
        return workflows.prepare(definition, input: input, requestedBy: "schedule")
    }

    /// Whether `id` is a workflow run the engine has not finished.
    package func workflowRunIsGoing(_ id: String) -> Bool {
        workflows?.known(id).map { !$0.run.status.isFinished } == true
    }

    /// Committed workflow runs go to the engine (stopping: they stay committed, and the next
    /// start resumes them).
    package func handOver(_ runs: [WorkflowRun]) {
        guard !runs.isEmpty else { return }
        for run in runs { inFlight.remove(run.id) }
        guard !stopping else { return }
        workflows?.adopt(runs)
    }
}
