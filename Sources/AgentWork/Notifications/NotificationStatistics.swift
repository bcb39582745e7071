import JSONSchema

/// What became of the task notifications since the agent started: for status and `/metrics`.
public struct NotificationStatistics: Sendable, Equatable {
    /// Emails the SMTP server accepted.
    public var emailsSent: UInt64 = 0
    /// Emails given up on after their last retry (server down, refused, timed out, bad
    /// credentials): each was logged.
    public var emailsFailed: UInt64 = 0
    /// Emails dropped without a try: the queue was full (the oldest goes) or the agent stopped.
    public var emailsDropped: UInt64 = 0
    /// Attempts that failed, retried ones included.
    public var failedAttempts: UInt64 = 0
    /// Emails waiting or being sent now.
    public var queued: Int = 0
    /// The last failure, secrets hidden.
    public var lastError: String?
    /// JSON records handed to the agent's outputs (their own statistics say what became of them).
    public var recordsPublished: UInt64 = 0
    /// Notifications a task's settings could not be read for (logged once per change).
    public var settingsErrors: UInt64 = 0

    public init() {}
}

extension NotificationStatistics {
    /// As `status` and `diagnostics` show them.
    public var jsonValue: JSONValue {
        var object: JSONObject = [
            "emails_sent": .number(JSONNumber(Int(clamping: emailsSent))),
            "emails_failed": .number(JSONNumber(Int(clamping: emailsFailed))),
            "emails_dropped": .number(JSONNumber(Int(clamping: emailsDropped))),
            "failed_attempts": .number(JSONNumber(Int(clamping: failedAttempts))),
            "queued": .number(JSONNumber(queued)),
            "records_published": .number(JSONNumber(Int(clamping: recordsPublished))),
            "settings_errors": .number(JSONNumber(Int(clamping: settingsErrors))),
        ]
        if let lastError { object["last_error"] = .string(lastError) }
        return .object(object)
    }

    /// The JSON Schema of ``jsonValue`` (in the OpenAPI document's `status` and `diagnostics`).
    package static let schema: JSONValue = [
        "type": "object", "additionalProperties": false,
        "description": "What became of the task notifications since the agent started.",
        "required": ["emails_sent", "emails_failed", "emails_dropped", "failed_attempts", "queued", "records_published", "settings_errors"],
        "properties": [
            "emails_sent": ["type": "integer", "minimum": 0], "emails_failed": ["type": "integer", "minimum": 0],
            "emails_dropped": ["type": "integer", "minimum": 0], "failed_attempts": ["type": "integer", "minimum": 0],
            "queued": ["type": "integer", "minimum": 0], "records_published": ["type": "integer", "minimum": 0],
            "settings_errors": ["type": "integer", "minimum": 0], "last_error": ["type": "string"],
        ],
    ]

    /// Whether nothing was ever notified nor is waiting (`status` leaves the line out then).
    public var isIdle: Bool {
        emailsSent == 0 && emailsFailed == 0 && emailsDropped == 0 && failedAttempts == 0 && queued == 0
            && recordsPublished == 0 && settingsErrors == 0
    }
}
