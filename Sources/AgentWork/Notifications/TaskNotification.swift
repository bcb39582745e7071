import AgentBase
import AgentOutputs
import Foundation
import JSONSchema

/// One notification about an attempt of a run: what the email templates and the outputs'
/// JSON record are made of.
package struct TaskNotification: Sendable {
    package var trigger: NotificationSettings.Trigger
    package var task: String
    package var description: String
    package var runID: String
    package var attempt: Int
    package var maxAttempts: Int
    package var willRetry: Bool
    package var outcome: TaskRunOutcome
    /// When the attempt ended.
    package var time: Date
    package var agent: String
    package var host: String

    /// Lines and bytes of stderr a notification carries at most (the newest).
    package static let stderrLines = 20
    package static let stderrBytes = 4096

    /// `2026-11-24T05:12:03.250Z`.
    package var timeText: String {
        ConsoleOutput.timestamp(seconds: time.timeIntervalSince1970, full: true)
    }

    /// The last ``stderrLines`` lines of the outcome's stderr, at most ``stderrBytes``.
    package var stderrTail: String? {
        guard let text = outcome.stderrTail?.trimmingCharacters(in: .newlines), !text.isEmpty else { return nil }
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).suffix(Self.stderrLines).joined(separator: "\n")
        if lines.utf8.count > Self.stderrBytes {
            lines = "…" + String(decoding: lines.utf8.suffix(Self.stderrBytes), as: UTF8.self)
        }
        return lines
    }

    /// The status in words: `failed`, `timed out`, `succeeded`, `was interrupted`.
    package var statusText: String {
        switch outcome.status {
        case .succeeded: "succeeded"
        case .failed: "failed"
        case .timedOut: "timed out"
        case .cancelled: "was cancelled"
        case .interrupted: "was interrupted"
        }
    }

    /// The mustache context. Keys without a value are left out, so that `{{#error}}…{{/error}}`
    /// sections disappear.
    package var templateContext: [String: Any] {
        var context: [String: Any] = [
            "event": trigger.rawValue, trigger.rawValue: true, "task": task, "run_id": runID, "attempt": String(attempt),
            "max_attempts": String(maxAttempts), "status": statusText, "status_code": outcome.status.rawValue,
            "time": timeText, "agent": agent, "host": host, "will_retry": willRetry, "next_attempt": String(attempt + 1),
        ]
        if !description.isEmpty { context["description"] = description }
        if let error = outcome.error, !error.isEmpty { context["error"] = error }
        if let code = outcome.exitCode { context["exit_code"] = String(code) }
        if let signal = outcome.signal, !signal.isEmpty { context["signal"] = signal }
        if let tail = stderrTail { context["stderr_tail"] = tail }
        return context
    }

    /// The record sent to the outputs (as the payload of a `task.notification` event).
    package var jsonValue: JSONValue {
        var object: JSONObject = [
            "event": .string(trigger.rawValue), "task": .string(task), "run_id": .string(runID),
            "attempt": .number(JSONNumber(attempt)), "max_attempts": .number(JSONNumber(maxAttempts)),
            "status": .string(outcome.status.rawValue), "will_retry": .bool(willRetry), "time": .string(timeText),
            "agent": .string(agent), "host": .string(host),
        ]
        if let error = outcome.error { object["error"] = .string(error) }
        if let code = outcome.exitCode { object["exit_code"] = .number(JSONNumber(Int(code))) }
        if let signal = outcome.signal { object["signal"] = .string(signal) }
        if let tail = stderrTail { object["stderr_tail"] = .string(tail) }
        return RuntimeEvent.taskNotification.payload(object)
    }
}
