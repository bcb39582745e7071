import AgentLoop
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// Task notification emails against a real SMTP server (aiosmtpd) on loopback.
@Suite(.ownThreads, .serialized,
       .enabled(if: SMTPTestServer.unavailableReason == nil, "needs an SMTP server: \(SMTPTestServer.unavailableReason ?? "")"))
struct NotificationEmailTests {
    typealias Support = NotificationTestSupport

    @Test func aFailedRunSendsAnEmailWithTaskTimeErrorAndTheLastLinesOfStderr() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .plain)
            let (notifier, _) = Support.notifier()
            notifier.runEnded(task: Support.task(notify: ["email": Support.email(port: server.port)]), runID: "run-7", attempt: 3,
                              outcome: Support.failure, willRetry: false, time: Support.failureTime)
            let messages = server.waitForMessages(1)
            try #require(messages.count == 1)
            let message = messages[0]
            #expect(message["mail_from"] as? String == "agent@example.com")
            #expect(message["rcpt_tos"] as? [String] == ["ops@example.com", "oncall@example.com"])
            #expect(message["subject"] as? String == "[nightly@db1] task backup failed (run run-7, attempt 3 of 3)")
            let body = try #require(message["body"] as? String)
            for expected in ["Task:      backup (Nightly backup)", "Run:       run-7", "Attempt:   3 of 3", "Status:    failed",
                             "Time:      2026-11-24T05:00:00.000Z", "Agent:     nightly on db1", "Exit code: 3",
                             "exit status 3: backup target unreachable", "stderr line 11\n", "stderr line 30"] {
                #expect(body.contains(expected), "\(expected) not in\n\(body)")
            }
            // Only the last 20 lines of stderr.
            #expect(!body.contains("stderr line 10\n"))
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsSent == 1 })
            #expect(OutputTestSupport.waitUntil { notifier.statistics.queued == 0 })
        }
    }

    @Test func templatesFromTheSettingsAreRenderedAsPlainText() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .plain)
            let (notifier, _) = Support.notifier()
            let email = Support.email(port: server.port, [
                "subject": "{{task}} <{{status}}> at {{time}}",
                "body": "{{#retry}}retrying after {{error}}{{/retry}}{{^retry}}final{{/retry}} & attempt {{next_attempt}}",
            ])
            notifier.runEnded(task: Support.task(notify: ["on": ["retry"], "email": email]), runID: "r1", attempt: 1,
                              outcome: Support.failure, willRetry: true, time: Support.failureTime)
            let message = try #require(server.waitForMessages(1).first)
            #expect(message["subject"] as? String == "backup <failed> at 2026-11-24T05:00:00.000Z")
            #expect((message["body"] as? String)?.hasPrefix("retrying after exit status 3: backup target unreachable & attempt 2") == true)
        }
    }

    @Test func anErrorWithLineBreaksCannotAddAHeaderOrARecipient() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .plain)
            let (notifier, _) = Support.notifier()
            var outcome = Support.failure
            outcome.error = "boom\r\nBcc: attacker@example.net\r\n\r\n.\r\nMAIL FROM:<x@y>"
            let email = Support.email(port: server.port, ["subject": "{{task}}: {{error}} — é"])
            notifier.runEnded(task: Support.task(notify: ["email": email]), runID: "r1", attempt: 1, outcome: outcome,
                              willRetry: false, time: Support.failureTime)
            let message = try #require(server.waitForMessages(1).first)
            #expect(message["rcpt_tos"] as? [String] == ["ops@example.com", "oncall@example.com"])
            #expect(message["subject"] as? String == "backup: boom  Bcc: attacker@example.net    .  MAIL FROM:<x@y> — é")
            let raw = try #require(message["raw"] as? String)
            #expect(!raw.contains("\nBcc:"))
        }
    }

    @Test func startTLSWithCredentialsFromTheEnvironment() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .starttls, username: "mailer", password: "s3cret-Pa55word")
            let (notifier, logs) = Support.notifier(environment: ["SMTP_USER": "mailer", "SMTP_PASSWORD": "s3cret-Pa55word"])
            let email = Support.email(port: server.port, [
                "starttls": "required", "ca_file": .string(server.certificate),
                "username": "${env:SMTP_USER}", "password": "${env:SMTP_PASSWORD}",
            ])
            notifier.runEnded(task: Support.task(notify: ["email": email]), runID: "r1", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            let message = try #require(server.waitForMessages(1).first)
            #expect(message["tls"] as? Bool == true)
            #expect(message["login"] as? String == "mailer")
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsSent == 1 })
            #expect(!logs.lines.joined().contains("s3cret-Pa55word"))
        }
    }

    @Test func smtpsIsTLSFromTheFirstByte() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .smtps)
            let (notifier, _) = Support.notifier()
            let email = Support.email(port: server.port, scheme: "smtps", ["ca_file": .string(server.certificate)])
            notifier.runEnded(task: Support.task(notify: ["email": email]), runID: "r1", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            let message = try #require(server.waitForMessages(1).first)
            #expect(message["tls"] as? Bool == true)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsSent == 1 })
        }
    }

    @Test func requiredStartTLSIsNotSkippedWhenTheServerDoesNotOfferIt() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .plain)
            let (notifier, logs) = Support.notifier()
            notifier.runEnded(task: Support.task(notify: ["email": Support.email(port: server.port, ["starttls": "required"])]),
                              runID: "r1", attempt: 1, outcome: Support.failure, willRetry: false, time: Support.failureTime)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsFailed == 1 })
            #expect(server.messages().isEmpty)
            // The failure is counted before it is logged: wait for the line, not a moment.
            #expect(OutputTestSupport.waitUntil { logs.lines.contains { $0.hasPrefix("error") && $0.contains("could not be delivered") } })
        }
    }

    @Test func badCredentialsAreRetriedLoggedAndCountedWithoutThePassword() throws {
        let loop = EventLoop()
        try loop.isolated {
            let server = try SMTPTestServer(mode: .starttls, username: "mailer", password: "right-password")
            let (notifier, logs) = Support.notifier(environment: ["SMTP_PASSWORD": "wrong-Pa55word"])
            let email = Support.email(port: server.port, [
                "starttls": "required", "ca_file": .string(server.certificate), "username": "mailer",
                "password": "${env:SMTP_PASSWORD}", "max_retries": 1, "retry_delay": 0,
            ])
            notifier.runEnded(task: Support.task(notify: ["email": email]), runID: "r1", attempt: 1, outcome: Support.failure,
                              willRetry: false, time: Support.failureTime)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsFailed == 1 })
            #expect(OutputTestSupport.waitUntil { logs.lines.contains { $0.contains("could not be delivered") } })
            let statistics = notifier.statistics
            #expect(statistics.failedAttempts == 2)
            #expect(statistics.emailsSent == 0)
            #expect(server.messages().isEmpty)
            let text = logs.lines.joined(separator: "\n")
            #expect(text.contains("attempt 1 of 2 failed"))
            #expect(text.contains("could not be delivered"))
            #expect(!text.contains("wrong-Pa55word"))
            #expect(statistics.lastError?.contains("wrong-Pa55word") == false)
        }
    }

    @Test func aServerThatIsDownIsLoggedAndCountedAndNothingElseChanges() throws {
        let loop = EventLoop()
        try loop.isolated {
            let port = try SMTPTestServer.closedPort()
            let (notifier, logs) = Support.notifier()
            notifier.runEnded(task: Support.task(notify: ["email": Support.email(port: port, ["max_retries": 2, "retry_delay": 0.05])]),
                              runID: "r1", attempt: 1, outcome: Support.failure, willRetry: false, time: Support.failureTime)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.emailsFailed == 1 })
            #expect(notifier.statistics.failedAttempts == 3)
            #expect(OutputTestSupport.waitUntil { notifier.statistics.queued == 0 })
            #expect(OutputTestSupport.waitUntil { logs.lines.contains { $0.contains("notification email for task backup run r1") && $0.contains("could not be delivered") } })
            #expect(notifier.stop(timeout: 30))
        }
    }
}
