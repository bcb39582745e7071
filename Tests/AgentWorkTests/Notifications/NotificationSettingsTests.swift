import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Testing

/// `"notify"` and `"notifications"`: the schemas and the checks behind them, with pointers.
@Suite(.ownThreads) struct NotificationSettingsTests {
    private let environment = ["SMTP_PASSWORD": "pw-from-env", "SMTP_USER": "mailer"]

    private func issues(_ document: JSONValue, environment: [String: String]? = nil) -> [String: String] {
        var found: [String: String] = [:]
        for issue in TaskNotifier.settingsIssues(document, agentDirectory: "/nonexistent", environment: environment ?? self.environment) {
            found[issue.pointer, default: ""] += issue.message
        }
        return found
    }

    private let goodEmail: JSONValue = [
        "url": "smtp://mail.example.com:587", "from": "agent@example.com", "to": "ops@example.com",
        "username": "${env:SMTP_USER}", "password": "${env:SMTP_PASSWORD}",
    ]

    @Test func aCompleteNotifyHasNoIssuesAndPassesItsSchema() throws {
        #expect(issues(["tasks": ["backup": ["notify": ["on": ["failure", "retry"], "email": goodEmail]]]]).isEmpty)
        let validator = try JSONSchemaValidator(schema: TaskNotifier.notifySchema)
        #expect(validator.validate(["email": goodEmail, "on": ["success"], "outputs": true]).isEmpty)
        #expect(validator.validate(false).isEmpty)
        #expect(!validator.validate(true).isEmpty)
        #expect(validator.validate(["emial": goodEmail]).map(\.message).joined().contains("emial"))
        #expect(validator.validate(["on": ["failed"]]).map(\.instanceLocation) == ["/on/0"])
        #expect(validator.validate(["email": ["url": "smtp://h", "starttls": "maybe", "timeout": 0]]).map(\.instanceLocation).sorted()
            == ["/email/starttls", "/email/timeout"])
        let defaults = try JSONSchemaValidator(schema: TaskNotifier.settingsSchema)
        #expect(defaults.validate(["queue": 10, "email": goodEmail]).isEmpty)
        #expect(defaults.validate(["queue": 0]).map(\.instanceLocation) == ["/queue"])
    }

    @Test func everyMistakeIsReportedAtItsKey() {
        let found = issues(["tasks": [
            "scheme": ["notify": ["email": ["url": "http://mail.example.com", "from": "agent@example.com", "to": "ops@example.com"]]],
            "no-to": ["notify": ["email": ["url": "smtp://mail.example.com:587", "from": "agent@example.com"]]],
            "plain-password": ["notify": ["email": ["url": "smtps://mail.example.com", "from": "a@example.com", "to": ["o@example.com"],
                                                    "username": "mailer", "password": "hunter2-in-the-file"]]],
            "unset": ["notify": ["email": ["url": "smtps://mail.example.com", "from": "a@example.com", "to": "o@example.com",
                                           "username": "mailer", "password": "${env:NOT_SET_ANYWHERE}"]]],
            "address": ["notify": ["email": ["url": "smtps://mail.example.com", "from": "a@example.com", "to": ["o@example.com", "ops\r\nRCPT TO:<x@y>"]]]],
            "template": ["notify": ["email": ["url": "smtps://mail.example.com", "from": "a@example.com", "to": "o@example.com", "subject": "{{#task}}"]]],
            "output": ["notify": ["outputs": ["alerts"]]],
            "in-url": ["notify": ["email": ["url": "smtp://me:pw@mail.example.com", "from": "a@example.com", "to": "o@example.com"]]],
            "clear": ["notify": ["email": ["url": "smtp://mail.example.com", "starttls": "never", "from": "a@example.com", "to": "o@example.com",
                                           "username": "mailer", "password": "${env:SMTP_PASSWORD}"]]],
            // A server that does not offer STARTTLS, or someone who strips the offer, got it.
            "downgradable": ["notify": ["email": ["url": "smtp://mail.example.com", "starttls": "try", "from": "a@example.com", "to": "o@example.com",
                                                  "username": "mailer", "password": "${env:SMTP_PASSWORD}"]]],
            "try-without-password": ["notify": ["email": ["url": "smtp://mail.example.com", "starttls": "try", "from": "a@example.com", "to": "o@example.com"]]],
        ], "outputs": [["type": "stdout", "name": "console"]]])
        #expect(found["/tasks/scheme/notify/email/url"]?.contains("expected an smtp:// (STARTTLS) or smtps:// (TLS) URL") == true)
        #expect(found["/tasks/no-to/notify/email"]?.contains("expected \"to\"") == true)
        #expect(found["/tasks/plain-password/notify/email/password"]?.contains("written as \"${env:NAME}\"") == true)
        #expect(found["/tasks/unset/notify/email/password"]?.contains("NOT_SET_ANYWHERE is not set") == true)
        #expect(found["/tasks/address/notify/email/to/1"]?.contains("expected an email address") == true)
        #expect(found["/tasks/template/notify/email/subject"]?.contains("expected a mustache template") == true)
        #expect(found["/tasks/output/notify/outputs/0"]?.contains("no output is named \"alerts\"") == true)
        #expect(found["/tasks/output/notify/outputs/0"]?.contains("\"console\"") == true)
        #expect(found["/tasks/in-url/notify/email/url"]?.contains("credentials do not belong in the URL") == true)
        #expect(found["/tasks/clear/notify/email/starttls"]?.contains("in clear") == true)
        #expect(found["/tasks/downgradable/notify/email/starttls"]?.contains("\"try\" would send the password in clear to a server that does not offer STARTTLS") == true)
        #expect(found.count == 10, "\(found)")
        // The password written in the file is never repeated in a message.
        #expect(!found.values.joined().contains("hunter2"))
    }

    @Test func aTaskCompletesTheAgentWideDefaultsAndTheirMistakesAreReportedOnce() {
        let defaults: JSONValue = ["email": ["url": "smtp://mail.example.com:587", "from": "agent@example.com",
                                             "username": "mailer", "password": "plain-in-defaults"]]
        let found = issues(["notifications": defaults, "tasks": [
            "a": ["notify": ["email": ["to": "a@example.com"]]],
            "b": ["notify": ["email": ["to": "b@example.com"]]],
            "c": ["type": "command"],
            "d": ["notify": false],
        ]])
        #expect(found["/notifications/email/password"]?.contains("written as \"${env:NAME}\"") == true)
        #expect(found["/tasks/c/notify"]?.contains("expected \"to\"") == true)
        #expect(found.count == 2, "\(found)")

        let complete: JSONValue = ["email": goodEmail]
        #expect(issues(["notifications": complete, "tasks": ["a": ["notify": ["email": ["to": "a@example.com"]]], "c": [:]]]).isEmpty)
    }

    @Test func mergingLetsATaskOverrideKeysOfTheDefaultEmail() {
        let merged = NotificationSettings.merged(task: ["on": ["success"], "email": ["to": "x@example.com"]],
                                                 defaults: ["queue": 5, "on": ["failure"], "email": ["url": "smtps://h", "to": "y@example.com"]])
        #expect(merged == ["on": ["success"], "email": ["url": "smtps://h", "to": "x@example.com"]])
        #expect(NotificationSettings.merged(task: false, defaults: ["outputs": true]) == nil)
        #expect(NotificationSettings.merged(task: nil, defaults: nil) == nil)
        #expect(NotificationSettings.merged(task: nil, defaults: ["queue": 5]) == nil)
    }

    @Test func theMessageIsBase64AndTheSubjectEncodedWhenNotASCII() {
        let message = String(decoding: SMTPMailer.message(from: "a@example.com", to: ["b@example.com"], subject: "tâche échouée\r\nBcc: x@y",
                                                          body: "line\n.\nend", date: NotificationTestSupport.failureTime, host: "h"), as: UTF8.self)
        #expect(message.contains("Date: Tue, 24 Nov 2026 05:00:00 +0000\r\n"))
        #expect(message.contains("Subject: =?UTF-8?B?"))
        #expect(!message.contains("\nBcc:"))
        #expect(message.contains("\r\n\r\n" + Data("line\r\n.\r\nend".utf8).base64EncodedString() + "\r\n"))
        #expect(SMTPMailer.encodedHeader("plain subject") == "plain subject")
    }
}
