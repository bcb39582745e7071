import AgentLoop
import JSONSchema

/// Carries out runs assigned to people (executors with a `user`): a run waits, `running`, until
/// its person completes it (`task complete RUN --output JSON`, the dashboard) or fails it
/// (`task fail RUN --error TEXT`). Its task's timeout and a cancel end it as for any runner.
/// Loop thread only, like every ``TaskRunner``.
@LoopActor
package final class PersonTaskRunner: @LoopActor TaskRunner {
    private struct Waiting {
        var start: TaskRunStart
        var report: (TaskRunReport) -> Void
    }

    private var waiting: [String: Waiting] = [:]

    package init() {}

    package func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
        waiting[run.runID] = Waiting(start: run, report: report)
    }

    package func cancel(runID: String, reason: TaskRunOutcome.Status) {
        guard let run = waiting.removeValue(forKey: runID) else { return }
        let why = switch reason {
        case .timedOut: "timed out waiting for \(run.start.executor ?? "its person")"
        case .interrupted: "the agent stopped while the run waited for \(run.start.executor ?? "its person")"
        default: "cancelled"
        }
        run.report(.finished(TaskRunOutcome(status: reason, error: why)))
    }

    package func shutDown() {
        for id in waiting.keys.sorted() { cancel(runID: id, reason: .interrupted) }
    }

    /// Whether `runID` waits for a person.
    package func isWaiting(_ runID: String) -> Bool { waiting[runID] != nil }

    /// Ends a waiting run with `outcome`; false when it does not wait.
    package func finish(_ runID: String, _ outcome: TaskRunOutcome) -> Bool {
        guard let run = waiting.removeValue(forKey: runID) else { return false }
        run.report(.finished(outcome))
        return true
    }
}
