import AgentBase
import Foundation
import JSONSchema
import Mustache

/// What a task's notifications do, read from its `"notify"` merged over the agent-wide
/// `"notifications"` section (the task's keys win; `"email"` is merged key by key, so a task
/// may name only its own `"to"`; `"notify": false` turns the defaults off for that task).
///
/// ```json
/// "notify": {"on": ["failure", "retry"],
///            "email": {"url": "smtp://mail.example.com:587", "username": "${env:SMTP_USER}",
///                      "password": "${env:SMTP_PASSWORD}", "from": "agent@example.com",
///                      "to": ["ops@example.com"]},
///            "outputs": ["alerts"]}
/// ```
package struct NotificationSettings: Sendable {
    /// When a notification is sent.
    package enum Trigger: String, Sendable, CaseIterable {
        /// The run failed (failed, timed out or interrupted) with no attempt left.
        case failure
        /// An attempt failed and the run will be retried.
        case retry
        /// The run succeeded.
        case success
    }

    /// `"outputs"`: which of the agent's outputs get the JSON record.
    package enum Outputs: Sendable, Equatable {
        case none
        /// `true`: every output that takes events.
        case all
        /// The outputs with these `"name"`s.
        case named(Set<String>)
    }

    package var triggers: Set<Trigger>
    package var email: Email?
    package var outputs: Outputs

    /// `"email"`: one message per notification over SMTP.
    package struct Email: Sendable {
        /// `smtp://host:port` or `smtps://host:port`, as written.
        package var url: String
        /// STARTTLS on `smtp://` (ignored for `smtps://`, which is TLS from the start).
        package var starttls: StartTLS
        /// PEM file of the CA certificates to trust instead of the system's (absolute).
        package var caFile: String?
        package var username: String?
        /// The secret itself: never shown; ``redacted(_:)`` hides it in messages.
        package var password: String?
        package var from: String
        package var to: [String]
        package var subject: MustacheTemplate
        package var body: MustacheTemplate
        package var connectTimeout: Double
        package var timeout: Double
        /// Further attempts after a failed one.
        package var maxRetries: Int
        /// Seconds before the first retry; doubled for each further one.
        package var retryDelay: Double
        /// Each secret value with the reference it came from (`"${env:SMTP_PASSWORD}"`).
        package var secrets: [String: String]

        package enum StartTLS: String, Sendable {
            case required, `try`, never
        }

        /// `text` with every secret value replaced by its `${env:}` reference.
        package func redacted(_ text: String) -> String {
            secrets.keys.sorted { $0.count > $1.count }.reduce(text) { text, value in
                text.replacingOccurrences(of: value, with: secrets[value] ?? "")
            }
        }
    }

    package static let defaultConnectTimeout = 10.0
    package static let defaultTimeout = 30.0
    package static let defaultMaxRetries = 2
    package static let defaultRetryDelay = 5.0
    /// Notifications waiting for delivery at most (`"notifications": {"queue": N}`).
    package static let defaultQueue = 100

    // MARK: Merging

    /// The task's `notify` over the agent-wide defaults; nil: nothing to notify.
    package static func merged(task notify: JSONValue?, defaults: JSONValue?) -> JSONValue? {
        if notify?.boolValue == false { return nil }
        guard case .object(var merged) = defaults ?? .object([:]) else { return notify }
        merged["queue"] = nil
        guard case .object(let own)? = notify else { return merged.isEmpty ? nil : .object(merged) }
        for (key, value) in own {
            if key == "email", case .object(var email)? = merged["email"], case .object(let ownEmail) = value {
                for (emailKey, emailValue) in ownEmail { email[emailKey] = emailValue }
                merged["email"] = .object(email)
            } else {
                merged[key] = value
            }
        }
        return .object(merged)
    }

    /// Where a key of the merged settings was written: under the task's `notify` when it has
    /// the key, else under the agent's `notifications`.
    package struct Origins {
        /// The task's `notify` as written (the defaults themselves when reading them alone).
        package var task: JSONValue?
        /// `/tasks/backup/notify`.
        package var taskPointer: String
        /// `/notifications`.
        package var defaultsPointer: String = "/notifications"

        package func pointer(_ key: String) -> String {
            (task?[key] != nil ? taskPointer : defaultsPointer) + "/" + key
        }

        package func emailPointer(_ key: String) -> String {
            (task?["email"]?[key] != nil ? taskPointer : defaultsPointer) + "/email/" + key
        }

        /// Where a key missing from the merged `email` is reported: the task's `email`, or
        /// its `notify` when the email comes from the defaults.
        package var emailObject: String {
            task?["email"] != nil ? taskPointer + "/email" : taskPointer
        }
    }

    // MARK: Reading

    /// Reads merged settings (see ``merged(task:defaults:)``), which are expected to have
    /// passed ``schema``; anything that cannot work is an issue at the pointer it was written at.
    /// `partial`: the agent-wide defaults alone, where keys a task adds (`to`) may be missing.
    package static func read(
        _ json: JSONValue, origins: Origins, partial: Bool = false, agentDirectory: String, outputNames: Set<String>?,
        environment: [String: String], issues: inout [(pointer: String, message: String)]
    ) -> NotificationSettings? {
        guard case .object = json else {
            issues.append((origins.taskPointer, "expected an object (or false to turn the agent's \"notifications\" off for this task); found \(Describe.value(json))"))
            return nil
        }
        let before = issues.count
        var triggers: Set<Trigger> = [.failure]
        if let on = json["on"]?.arrayValue {
            triggers = []
            for (index, item) in on.enumerated() {
                guard let text = item.stringValue, let trigger = Trigger(rawValue: text) else {
                    issues.append((origins.pointer("on") + "/\(index)", "expected one of \"failure\", \"retry\", \"success\"; found \(Describe.value(item))"))
                    continue
                }
                triggers.insert(trigger)
            }
        }
        var outputs = Outputs.none
        switch json["outputs"] {
        case .bool(true)?: outputs = .all
        case .array(let items)?:
            var names = Set<String>()
            for (index, item) in items.enumerated() {
                guard let name = item.stringValue, !name.isEmpty else {
                    issues.append((origins.pointer("outputs") + "/\(index)", "expected the name of an output; found \(Describe.value(item))"))
                    continue
                }
                if let outputNames, !outputNames.contains(name) {
                    let known = outputNames.sorted().map { "\"\($0)\"" }.joined(separator: ", ")
                    issues.append((origins.pointer("outputs") + "/\(index)", "no output is named \"\(name)\"; give one in \"outputs\" a \"name\"" + (known.isEmpty ? "" : " (named now: \(known))")))
                    continue
                }
                names.insert(name)
            }
            outputs = names.isEmpty ? .none : .named(names)
        default: break
        }
        var email: Email?
        if let emailJSON = json["email"] {
            email = readEmail(emailJSON, origins: origins, partial: partial, agentDirectory: agentDirectory, environment: environment, issues: &issues)
        }
        guard issues.count == before else { return nil }
        return NotificationSettings(triggers: triggers, email: email, outputs: outputs)
    }

    private static func readEmail(
        _ json: JSONValue, origins: Origins, partial: Bool, agentDirectory: String, environment: [String: String],
        issues: inout [(pointer: String, message: String)]
    ) -> Email? {
        guard case .object = json else {
            issues.append((origins.pointer("email"), "expected an object with \"url\", \"from\" and \"to\"; found \(Describe.value(json))"))
            return nil
        }
        let before = issues.count
        var secrets: [String: String] = [:]
        func required(_ key: String, _ example: String) -> String? {
            guard let text = json[key]?.stringValue, !text.isEmpty else {
                if !partial { issues.append((origins.emailObject, "expected \"\(key)\" (e.g. \(example)); found none")) }
                return nil
            }
            return text
        }

        let url = required("url", "\"smtp://mail.example.com:587\" or \"smtps://mail.example.com:465\"")
        if let url {
            let lower = url.lowercased()
            if !(lower.hasPrefix("smtp://") || lower.hasPrefix("smtps://")) {
                issues.append((origins.emailPointer("url"), "expected an smtp:// (STARTTLS) or smtps:// (TLS) URL such as \"smtp://mail.example.com:587\"; found \"\(url)\""))
            } else if let components = URLComponents(string: url), components.host?.isEmpty == false {
                if components.user != nil || components.password != nil {
                    issues.append((origins.emailPointer("url"), "credentials do not belong in the URL (it is shown in logs); write them as \"username\" and \"password\" from ${env:NAME}"))
                }
            } else {
                issues.append((origins.emailPointer("url"), "expected a URL with a host, such as \"smtp://mail.example.com:587\"; found \"\(url)\""))
            }
        }
        let starttls = json["starttls"]?.stringValue.flatMap(Email.StartTLS.init(rawValue:)) ?? .required
        if let written = json["starttls"], Email.StartTLS(rawValue: written.stringValue ?? "") == nil {
            issues.append((origins.emailPointer("starttls"), "expected \"required\", \"try\" or \"never\"; found \(Describe.value(written))"))
        }

        func secret(_ key: String, mustReference: Bool) -> String? {
            guard let written = json[key]?.stringValue else { return nil }
            let pointer = origins.emailPointer(key)
            if mustReference, !EnvironmentReferences.containsReference(written) {
                issues.append((pointer, "expected the \(key) from the environment, written as \"${env:NAME}\" (e.g. \"${env:SMTP_PASSWORD}\"); a \(key) written in the settings file would be shown to whoever reads the settings"))
                return nil
            }
            do {
                let value = try EnvironmentReferences.resolve(written, environment: environment)
                for (found, reference) in EnvironmentReferences.values(in: written, environment: environment) { secrets[found] = reference }
                return value
            } catch {
                issues.append((pointer, error.message))
                return nil
            }
        }
        let username = secret("username", mustReference: false)
        let password = secret("password", mustReference: true)
        if json["password"] != nil, json["username"] == nil {
            issues.append((origins.emailObject, "expected \"username\" next to \"password\" (AUTH needs both); found none"))
        }
        if json["password"] != nil, starttls != .required, url?.lowercased().hasPrefix("smtp://") == true {
            // "try" too: whoever sits between the agent and the server can strip the offer.
            let clear = starttls == .never ? "would send the password in clear" : "would send the password in clear to a server that does not offer STARTTLS, or once someone between the agent and the server strips the offer"
            issues.append((origins.emailPointer("starttls"), "\"\(starttls.rawValue)\" \(clear); use \"required\" (or an smtps:// URL)"))
        }

        var caFile: String?
        if let written = json["ca_file"]?.stringValue {
            let path = written.hasPrefix("/") ? written : (agentDirectory as NSString).appendingPathComponent(written)
            if !FileManager.default.isReadableFile(atPath: path) {
                issues.append((origins.emailPointer("ca_file"), "expected a readable PEM file of CA certificates; \(path) cannot be read"))
            }
            caFile = path
        }

        let from = required("from", "\"agent@example.com\"")
        if let from, !isAddress(from) {
            issues.append((origins.emailPointer("from"), "expected an email address such as \"agent@example.com\"; found \"\(from)\""))
        }
        var to: [String] = []
        switch json["to"] {
        case .string(let one)?: to = [one]
        case .array(let many)?: to = many.compactMap(\.stringValue)
        default: break
        }
        if to.isEmpty, !partial {
            issues.append((json["to"] == nil ? origins.emailObject : origins.emailPointer("to"),
                           "expected \"to\": an address or a list of addresses (e.g. [\"ops@example.com\"]); found none"))
        }
        for (index, address) in to.enumerated() where !isAddress(address) {
            let pointer = json["to"]?.arrayValue == nil ? origins.emailPointer("to") : origins.emailPointer("to") + "/\(index)"
            issues.append((pointer, "expected an email address such as \"ops@example.com\"; found \"\(address)\""))
        }

        func template(_ key: String, _ fallback: String) -> MustacheTemplate? {
            let text = json[key]?.stringValue ?? fallback
            do {
                return try NotificationTemplates.compile(text)
            } catch {
                issues.append((origins.emailPointer(key), "expected a mustache template: \(NotificationTemplates.describe(error))"))
                return nil
            }
        }
        let subject = template("subject", NotificationTemplates.defaultSubject)
        let body = template("body", NotificationTemplates.defaultBody)

        guard issues.count == before, let url, let from, let subject, let body else { return nil }
        return Email(
            url: url, starttls: starttls, caFile: caFile, username: username, password: password, from: from, to: to,
            subject: subject, body: body,
            connectTimeout: json["connect_timeout"]?.numberValue?.doubleValue ?? defaultConnectTimeout,
            timeout: json["timeout"]?.numberValue?.doubleValue ?? defaultTimeout,
            maxRetries: json["max_retries"]?.numberValue?.intValue ?? defaultMaxRetries,
            retryDelay: json["retry_delay"]?.numberValue?.doubleValue ?? defaultRetryDelay,
            secrets: secrets)
    }

    /// `local@domain`: nothing that could break out of an SMTP command or a header.
    package static func isAddress(_ text: String) -> Bool {
        let parts = text.split(separator: "@", omittingEmptySubsequences: false)
        guard parts.count == 2, !parts[0].isEmpty, !parts[1].isEmpty, text.utf8.count <= 254 else { return false }
        return !text.unicodeScalars.contains { $0.value <= 0x20 || $0.value == 0x7f || "<>()[]\\,;:\"".unicodeScalars.contains($0) }
    }
}
