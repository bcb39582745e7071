import AgentBase
import AgentCore
import Foundation
import JSONSchema

/// How the supervisor treats one process: when to restart it, how fast, how often before it
/// gives up, how long it may take to stop, and how long it may stay silent.
///
/// ```json
/// "restart": {"policy": "on-failure", "initial_delay": 0.1, "multiplier": 2, "max_delay": 30,
///             "reset_after": 10, "max_restarts": 5, "within": 60},
/// "stop_timeout": 5, "watchdog": 10, "start_timeout": 30
/// ```
/// `"restart": "never"` is short for `{"policy": "never"}`.
public struct ProcessPolicy: Sendable, Equatable {
    /// When a worker that ended is started again.
    public struct Restart: RawRepresentable, Sendable, Equatable {
        public let rawValue: String
        public init?(rawValue: String) {
            guard Self.all.contains(rawValue) else { return nil }
            self.rawValue = rawValue
        }
        /// Whatever the exit.
        public static let always = Restart(rawValue: "always")!
        /// Only after a crash, a non-zero exit or a watchdog kill.
        public static let onFailure = Restart(rawValue: "on-failure")!
        public static let never = Restart(rawValue: "never")!
        public static let all = ["always", "on-failure", "never"]
    }

    public var restart: Restart = .always
    /// Seconds before the first restart; each failure in a row multiplies it, up to `maximumDelay`.
    public var initialDelay = 0.1
    public var multiplier = 2.0
    public var maximumDelay = 30.0
    /// After this many seconds of healthy running the delay starts over.
    public var resetAfter = 10.0
    /// At most this many restarts within `within` seconds, then the process is failed (nil: no limit).
    public var maximumRestarts: Int? = 5
    public var within = 60.0
    /// Seconds between the stop request (and SIGTERM) and SIGKILL.
    public var stopTimeout = 5.0
    /// A worker that sends no heartbeat for this many seconds is killed (nil: no watchdog).
    public var watchdog: Double?
    /// A worker that does not report ready within this many seconds is killed: a failed start.
    public var startTimeout = 30.0
    /// Bytes of undelivered events kept for this process (a monitor) before `whenFull` applies
    /// (by default ``droppingQueueLimit`` or ``blockingQueueLimit``, after `whenFull`).
    public var queueLimit = droppingQueueLimit
    /// `drop-oldest`: the oldest undelivered events make room (counted in `status`);
    /// `block`: the processes feeding this one are paused until it catches up.
    public var whenFull = "drop-oldest"

    public init() {}

    /// The default queue with `drop-oldest`: what a burst may leave undelivered before events
    /// are lost.
    public static let droppingQueueLimit = 16 << 20
    /// The default queue with `block`: nothing is lost, so it only has to keep the process
    /// busy while its producers are paused and resumed (its 4 MB delivery ring is in front of
    /// it). A deeper queue adds delay and memory, not throughput: a 16 MB backlog has gone cold
    /// in the caches by the time it is copied into the ring (supervisor CPU per 100 B event
    /// 0.20 µs with 16 MB, 0.15 µs with 1 MB, in alternating runs).
    public static let blockingQueueLimit = 1 << 20

    /// The backoff before restart number `failuresInARow` (1-based), within `0...maximumDelay`
    /// whatever the policy holds (an overflowing product is the maximum, not infinity or NaN).
    public func delay(afterFailuresInARow failures: Int) -> Double {
        guard initialDelay > 0 else { return 0 }
        let grown = initialDelay * pow(multiplier, Double(max(0, failures - 1)))
        return Saturating.seconds(grown.isNaN ? maximumDelay : min(maximumDelay, grown))
    }

    /// Host-level keys this policy reads.
    package static let keys = ["restart", "stop_timeout", "watchdog", "start_timeout", "queue"]
    package static let restartKeys = ["policy", "initial_delay", "multiplier", "max_delay", "reset_after", "max_restarts", "within"]

    /// Reads the policy keys of a process entry; values the host schema refuses are ignored
    /// here (the schema reports them), and every duration is clamped to what a timer can
    /// hold, so that a value the schema missed cannot reach a conversion that traps.
    package init(_ object: JSONObject) {
        self.init()
        func seconds(_ value: JSONValue?, atLeast minimum: Double) -> Double? {
            guard let number = value?.numberValue?.doubleValue, !number.isNaN else { return nil }
            return Saturating.seconds(max(minimum, number))
        }
        switch object["restart"] {
        case .string(let name)?:
            restart = Restart(rawValue: name) ?? restart
        case .object(let fields)?:
            if let name = fields["policy"]?.stringValue, let policy = Restart(rawValue: name) { restart = policy }
            initialDelay = seconds(fields["initial_delay"], atLeast: 0) ?? initialDelay
            if let factor = fields["multiplier"]?.numberValue?.doubleValue, !factor.isNaN {
                multiplier = min(max(1, factor), SettingsBounds.largestMultiplier)
            }
            maximumDelay = seconds(fields["max_delay"], atLeast: 0) ?? maximumDelay
            resetAfter = seconds(fields["reset_after"], atLeast: 0) ?? resetAfter
            within = seconds(fields["within"], atLeast: 0.001) ?? within
            if fields["max_restarts"] == .null {
                maximumRestarts = nil
            } else if let n = fields["max_restarts"]?.numberValue {
                // 1e23 is an integer to JSON Schema but not an Int: the schema's maximum
                // refuses it; here it saturates rather than leaving the default.
                maximumRestarts = max(0, n.intValue ?? Int(saturating: n.doubleValue))
            }
        default:
            break
        }
        stopTimeout = seconds(object["stop_timeout"], atLeast: 0) ?? stopTimeout
        startTimeout = seconds(object["start_timeout"], atLeast: 0.001) ?? startTimeout
        if let watchdog = seconds(object["watchdog"], atLeast: 0), watchdog > 0 { self.watchdog = watchdog }
        if let queue = object["queue"]?.objectValue {
            if let policy = queue["when_full"]?.stringValue { whenFull = policy }
            if let number = queue["limit_bytes"]?.numberValue,
               case let limit = number.intValue ?? Int(saturating: number.doubleValue), limit > 0 {
                queueLimit = min(limit, SettingsBounds.largestQueueBytes)
            } else if whenFull == "block" {
                queueLimit = Self.blockingQueueLimit
            }
        }
    }

    /// `5`, `0.25`, `1e+300`: a duration for a message (never traps).
    package static func format(_ value: Double) -> String { value.compactText }
}
