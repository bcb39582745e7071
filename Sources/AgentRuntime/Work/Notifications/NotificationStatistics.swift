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
