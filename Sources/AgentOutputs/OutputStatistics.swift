import JSONSchema

/// What one output has done so far, for `agent-control status`.
public struct OutputStatistics: Sendable, Equatable {
    /// The output's name (see `OutputConfiguration.name`).
    public var name: String
    /// `stdout`, `file` or `webhook`.
    public var type: String
    /// Records written (stdout, file) or accepted by the webhook with a 2xx answer.
    public var delivered: UInt64
    /// Records lost: the oldest of a full queue, a webhook batch that failed `max_retries`
    /// retries, a failed write, or what was still queued when `stop` ran out of time.
    public var dropped: UInt64
    /// Failed delivery attempts (write errors, webhook connection errors, timeouts, non-2xx).
    public var failedAttempts: UInt64
    /// The latest failure, until a later attempt succeeds.
    public var lastError: String?
    /// Records waiting, including a batch being sent.
    public var queued: Int

    /// Creates statistics.
    public init(
        name: String, type: String, delivered: UInt64 = 0, dropped: UInt64 = 0, failedAttempts: UInt64 = 0,
        lastError: String? = nil, queued: Int = 0
    ) {
        self.name = name
        self.type = type
        self.delivered = delivered
        self.dropped = dropped
        self.failedAttempts = failedAttempts
        self.lastError = lastError
        self.queued = queued
    }

    /// `{"name", "type", "delivered", "dropped", "failed_attempts", "last_error", "queued"}`
    /// for `status --json`.
    public var jsonValue: JSONValue {
        .object([
            "name": .string(name), "type": .string(type), "delivered": .number(JSONNumber(Int(clamping: delivered))),
            "dropped": .number(JSONNumber(Int(clamping: dropped))),
            "failed_attempts": .number(JSONNumber(Int(clamping: failedAttempts))),
            "last_error": lastError.map { .string($0) } ?? .null, "queued": .number(JSONNumber(queued)),
        ])
    }
}
