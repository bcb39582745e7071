import AgentLoop
@testable import AgentOutputs
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The delivery never holds up its caller: a hung server, a flood, the outputs route.
@Suite(.ownThreads, .serialized,
       .enabled(if: SMTPTestServer.unavailableReason == nil, "needs an SMTP server: \(SMTPTestServer.unavailableReason ?? "")"))
struct NotificationDeliveryTests {
    typealias Support = NotificationTestSupport

    @Test func aServerThatNeverAnswersHoldsUpNeitherTheCallerNorTheOutputs() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .silent)
            let folder = TestPaths.temporaryDirectory("notify-silent")
            defer { try? FileManager.default.removeItem(atPath: folder) }
            let (logger, _) = OutputTestSupport.capturingLogger()
            let outputs = try OutputHub(json: [["type": "file", "name": "alerts", "path": "alerts.jsonl"]], baseDirectory: folder,
                                        logger: logger, environment: [:])
            let (notifier, _) = Support.notifier(outputs: outputs)
            let email = Support.email(port: server.port, ["timeout": 600, "connect_timeout": 600])
            notifier.runEnded(task: Support.task(notify: ["email": email]), runID: "r1", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            // The call has returned while the server has not even greeted: the email is still on its way.
            #expect(OutputTestSupport.waitUntil { notifier.statistics.queued == 1 })
            notifier.runEnded(task: Support.task("report", notify: ["outputs": ["alerts"]]), runID: "r2", attempt: 1,
                              outcome: Support.failure, willRetry: false, time: Support.failureTime)
            #expect(OutputTestSupport.waitUntil { outputs.statistics.first?.delivered == 1 })
            let statistics = notifier.statistics
            #expect(statistics.queued == 1 && statistics.emailsSent == 0 && statistics.emailsFailed == 0)
            // Stopping aborts the hung transfer at its deadline and counts the email dropped.
            notifier.stop(timeout: 0.2)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsDropped == 1 })
            #expect(notifier.statistics.queued == 0)
            outputs.stop(timeout: 30)
        }
    }

    @Test func aFloodOfFailuresKeepsTheQueueBoundedDroppingTheOldest() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .silent)
            let (notifier, logs) = Support.notifier(defaults: ["queue": 3, "email": Support.email(port: server.port, ["timeout": 600])])
            let task = Support.task(notify: nil)
            for n in 1...10 {
                notifier.runEnded(task: task, runID: "r\(n)", attempt: 1, outcome: Support.failure, willRetry: false, time: Support.failureTime)
            }
            let statistics = notifier.statistics
            #expect(statistics.queued <= 4)  // 3 waiting, 1 being sent
            #expect(statistics.queued + Int(statistics.emailsDropped) == 10)
            #expect(logs.lines.contains { $0.contains("dropped: 3 emails were already waiting") })
            notifier.stop(timeout: 0)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsDropped == 10 })
        }
    }
}
