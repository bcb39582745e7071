import AgentLoop
@testable import AgentOutputs
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// Notifications as JSON records through the agent's outputs, and which runs notify.
@Suite(.ownThreads) struct NotificationOutputTests {
    typealias Support = NotificationTestSupport

    /// Runs `body` with a notifier whose outputs are two files, "alerts" and "other"; returns
    /// the records each received.
    private func records(defaults: JSONValue? = nil, _ body: @LoopActor (TaskNotifier) -> Void) throws -> (alerts: [JSONValue], other: [JSONValue]) {
        let folder = TestPaths.temporaryDirectory("notify-outputs")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let (logger, _) = OutputTestSupport.capturingLogger()
        let outputs = try OutputHub(json: [["type": "file", "name": "alerts", "path": "alerts.jsonl"],
                                           ["type": "file", "name": "other", "path": "other.jsonl"]],
                                    baseDirectory: folder, logger: logger, environment: [:])
        // The notifier is the loop's: a loop of the test's own to be on.
        EventLoop().isolated {
            let (notifier, _) = Support.notifier(defaults: defaults, outputs: outputs)
            body(notifier)
        }
        #expect(outputs.stop(timeout: 10))
        return (try OutputTestSupport.jsonLines(folder + "/alerts.jsonl"), try OutputTestSupport.jsonLines(folder + "/other.jsonl"))
    }

    @Test func aFailureIsWrittenAsAJSONRecordToTheNamedOutputOnly() throws {
        let (alerts, other) = try records { notifier in
            notifier.runEnded(task: Support.task(notify: ["outputs": ["alerts"]]), runID: "run-7", attempt: 3,
                              outcome: Support.failure, willRetry: false, time: Support.failureTime)
            #expect(notifier.statistics.recordsPublished == 1)
        }
        #expect(other.isEmpty)
        try #require(alerts.count == 1)
        #expect(alerts[0]["type"] == "task.notification")
        #expect(alerts[0]["source"] == "tasks")
        let payload = try #require(alerts[0]["payload"])
        #expect(payload["event"] == "failure")
        #expect(payload["task"] == "backup")
        #expect(payload["run_id"] == "run-7")
        #expect(payload["attempt"] == 3)
        #expect(payload["max_attempts"] == 3)
        #expect(payload["status"] == "failed")
        #expect(payload["time"] == "2026-11-24T05:00:00.000Z")
        #expect(payload["error"] == "exit status 3: backup target unreachable")
        #expect(payload["exit_code"] == 3)
        #expect(payload["agent"] == "nightly")
        #expect(payload["host"] == "db1")
        let tail = try #require(payload["stderr_tail"]?.stringValue)
        #expect(tail.hasPrefix("stderr line 11\n") && tail.hasSuffix("stderr line 30"))
    }

    /// Interrupted attempts (the agent died while they ran) are not counted by the retry
    /// policy, so they add to the attempts a run may have: a run of a task with two retries,
    /// interrupted once, fails for good at attempt 4 of 4 — not "4 of 3", nor "3 of 3, will retry".
    @Test func anInterruptedAttemptAddsToTheAttemptsTheNotificationCounts() throws {
        let (alerts, _) = try records { notifier in
            let task = Support.task(notify: ["outputs": ["alerts"], "on": ["retry", "failure"]], retries: 2)
            notifier.runEnded(task: task, runID: "run-8", attempt: 3, interruptions: 1, outcome: Support.failure, willRetry: true, time: Support.failureTime)
            notifier.runEnded(task: task, runID: "run-8", attempt: 4, interruptions: 1, outcome: Support.failure, willRetry: false, time: Support.failureTime)
        }
        try #require(alerts.count == 2, "\(alerts)")
        #expect(alerts[0]["payload"]?["attempt"] == 3 && alerts[0]["payload"]?["max_attempts"] == 4, "\(alerts[0])")
        #expect(alerts[1]["payload"]?["attempt"] == 4 && alerts[1]["payload"]?["max_attempts"] == 4, "\(alerts[1])")
    }

    @Test func retriesAndSuccessesNotifyOnlyWhenAskedAndCancelledRunsNever() throws {
        let succeeded = TaskRunOutcome(status: .succeeded, output: "done")
        let (alerts, other) = try records { notifier in
            let quiet = Support.task("quiet", notify: ["outputs": ["alerts"]])
            let chatty = Support.task("chatty", notify: ["outputs": ["other"], "on": ["failure", "retry", "success"]])
            for task in [quiet, chatty] {
                notifier.runEnded(task: task, runID: "a", attempt: 1, outcome: Support.failure, willRetry: true, time: Support.failureTime)
                notifier.runEnded(task: task, runID: "a", attempt: 2, outcome: succeeded, willRetry: false, time: Support.failureTime)
                notifier.runEnded(task: task, runID: "b", attempt: 1, outcome: TaskRunOutcome(status: .cancelled), willRetry: false,
                                  time: Support.failureTime)
                notifier.runEnded(task: task, runID: "c", attempt: 3, outcome: TaskRunOutcome(status: .timedOut, error: "timed out after 600 s"),
                                  willRetry: false, time: Support.failureTime)
            }
        }
        #expect(alerts.map { $0["payload"]?["event"] } == ["failure"])
        #expect(alerts.first?["payload"]?["status"] == "timed_out")
        #expect(other.map { $0["payload"]?["event"] } == ["retry", "success", "failure"])
        #expect(other.first?["payload"]?["will_retry"] == true)
    }

    @Test func agentWideDefaultsApplyUnlessATaskSaysFalse() throws {
        let (alerts, other) = try records(defaults: ["outputs": true]) { notifier in
            notifier.runEnded(task: Support.task("inherits", notify: nil), runID: "a", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            notifier.runEnded(task: Support.task("opted-out", notify: false), runID: "b", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            notifier.runEnded(task: Support.task("own", notify: ["outputs": ["other"]]), runID: "c", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
        }
        #expect(alerts.map { $0["payload"]?["task"] } == ["inherits"])
        #expect(other.map { $0["payload"]?["task"] } == ["inherits", "own"])
    }
}
