import AgentLoop
@testable import AgentOutputs
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging

/// Tasks, outcomes and notifiers for the notification tests.
enum NotificationTestSupport {
    /// 2026-11-24T05:00:00Z.
    static let failureTime = Date(timeIntervalSince1970: 1_795_496_400)

    /// A failed attempt: exit status 3, an error, and 30 lines of stderr.
    static let failure = TaskRunOutcome(
        status: .failed, error: "exit status 3: backup target unreachable", exitCode: 3,
        stderrTail: (1...30).map { "stderr line \($0)" }.joined(separator: "\n") + "\n")

    static func task(_ name: String = "backup", notify: JSONValue?, retries: Int = 2) -> TaskDefinition {
        TaskDefinition(name: name, type: "command", description: "Nightly backup", retries: .init(max: retries),
                       command: .init(arguments: ["/bin/false"]), notify: notify)
    }

    /// An `email` object for `server` (plain SMTP, no STARTTLS) plus `extra` keys.
    static func email(port: Int, scheme: String = "smtp", _ extra: JSONObject = [:]) -> JSONValue {
        var object: JSONObject = [
            "url": .string("\(scheme)://127.0.0.1:\(port)"), "from": "agent@example.com",
            "to": ["ops@example.com", "oncall@example.com"], "starttls": "never", "max_retries": 0,
            "connect_timeout": 5, "timeout": 20,
        ]
        for (key, value) in extra { object[key] = value }
        return .object(object)
    }

    @LoopActor static func notifier(defaults: JSONValue? = nil, outputs: OutputHub? = nil, environment: [String: String] = [:],
                         directory: String = "/nonexistent") -> (TaskNotifier, OutputTestSupport.LogCapture) {
        let (logger, capture) = OutputTestSupport.capturingLogger()
        let notifier = TaskNotifier(defaults: defaults, outputs: outputs, agentName: "nightly", hostName: "db1",
                                    agentDirectory: directory, logger: logger, environment: environment)
        return (notifier, capture)
    }
}
