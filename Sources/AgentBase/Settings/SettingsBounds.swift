import JSONSchema

/// The largest values the settings accept. The host schema, the store's and the outputs'
/// schemas and the readers behind them all take their maxima from here, so that
/// `validate-settings` and a running agent refuse the same values. (The runtime also
/// saturates every conversion of such a value on its own, see `Saturating`: a bound missed
/// here still cannot crash the supervisor.)
public enum SettingsBounds {
    /// Timeouts and delays in seconds (`stop_timeout`, `start_timeout`, `watchdog`, the
    /// restart delays, the webhook's `timeout`, `batch_interval` and retry delays): a day.
    public static let longestTimeout: Double = 86_400
    /// The shortest period of anything that repeats on a timer at a setting's pace (a
    /// periodic query's `every`, `watchdog`, whose deadline is checked at a quarter of it,
    /// `start_timeout` likewise, the fleet's `heartbeat`): ten times a second. Without it,
    /// `1e-300` validated and the timer ran back to back.
    public static let shortestPeriod: Double = 0.1
    /// Windows in seconds (`restart.within`, `restart.reset_after`): a week.
    public static let longestWindow: Double = 604_800
    /// `restart.multiplier`.
    public static let largestMultiplier: Double = 1_000
    /// `restart.max_restarts`.
    public static let mostRestarts = 1_000_000
    /// `replicas`: workers of one process. Each costs a process, four descriptors and its
    /// rings in the supervisor; beyond a thousand an agent wants a fleet, not one host.
    public static let mostReplicas = 1_000
    /// `queue.limit_bytes`: 4 GiB of undelivered events for one process.
    public static let largestQueueBytes = 1 << 32
    /// `store.retention.max_age` in seconds: 100 years.
    public static let longestRetention: Double = 3_155_760_000
    /// `store.retention.max_events`.
    public static let mostStoredEvents = 1_000_000_000_000
    /// `store.retention.max_bytes`: 1 TiB.
    public static let largestStore = 1 << 40
    /// `store.retention.max_bytes` at least: 1 MiB, so that a few of the largest events fit.
    public static let smallestStore = 1 << 20
    /// `store.queue_limit`: events waiting to be written.
    public static let mostQueuedEvents = 10_000_000
    /// An output's `buffer` (its queue is allocated up front): records.
    public static let largestOutputBuffer = 1_000_000
    /// The most bytes an output's queue may hold (`buffer_bytes`): 16 GiB.
    public static let largestOutputBufferBytes = 1 << 34
    /// A webhook's `batch_size`: records per POST.
    public static let largestBatch = 100_000
    /// A webhook's `max_retries`.
    public static let mostRetries = 1_000_000
    /// A file output's `max_bytes`: 1 TiB.
    public static let largestFileBytes = 1 << 40
    /// A file output's `keep`: rotated files.
    public static let mostRotatedFiles = 1_000
}

extension SettingsBounds {
    /// A bound for a schema: `86400`, not `86400.0`, in its messages.
    package static func json(_ value: Double) -> JSONValue {
        .number(value.rounded() == value && abs(value) < 1e15 ? JSONNumber(Int(value)) : JSONNumber(value))
    }

    /// A bound for a schema.
    package static func json(_ value: Int) -> JSONValue { .number(JSONNumber(value)) }
}
