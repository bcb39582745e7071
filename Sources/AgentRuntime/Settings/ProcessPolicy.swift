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

    public init() {}

    /// The backoff before restart number `failuresInARow` (1-based).
    public func delay(afterFailuresInARow failures: Int) -> Double {
        min(maximumDelay, initialDelay * pow(multiplier, Double(max(0, failures - 1))))
    }

    /// Host-level keys this policy reads.
    static let keys = ["restart", "stop_timeout", "watchdog", "start_timeout"]
    static let restartKeys = ["policy", "initial_delay", "multiplier", "max_delay", "reset_after", "max_restarts", "within"]

    /// Reads the policy keys of a process entry; problems are appended to `issues`.
    init(_ object: JSONObject, pointer: String, file: String, process: String, issues: inout [SettingsIssue]) {
        self.init()
        func issue(_ key: String, _ message: String) {
            issues.append(SettingsIssue(file: file, pointer: "\(pointer)/\(key)", message: message, process: process))
        }
        func number(_ value: JSONValue, at key: String, minimum: Double, exclusive: Bool = false) -> Double? {
            guard let n = value.numberValue?.doubleValue, exclusive ? n > minimum : n >= minimum else {
                issue(key, "expected a number \(exclusive ? ">" : "≥") \(Self.format(minimum)), found \(Describe.value(value))")
                return nil
            }
            return n
        }
        switch object["restart"] {
        case nil: break
        case .string(let name)?:
            if let policy = Restart(rawValue: name) { restart = policy } else {
                issue("restart", "expected one of \"always\", \"on-failure\", \"never\", found \"\(name)\"\(Suggestions.hint(for: name, in: Restart.all))")
            }
        case .object(let fields)?:
            for (key, value) in fields {
                let at = "restart/\(JSONPointerToken.escape(key))"
                switch key {
                case "policy":
                    if let name = value.stringValue, let policy = Restart(rawValue: name) { restart = policy } else {
                        issue(at, "expected one of \"always\", \"on-failure\", \"never\", found \(Describe.value(value))\(value.stringValue.map { Suggestions.hint(for: $0, in: Restart.all) } ?? "")")
                    }
                case "initial_delay": initialDelay = number(value, at: at, minimum: 0) ?? initialDelay
                case "multiplier": multiplier = number(value, at: at, minimum: 1) ?? multiplier
                case "max_delay": maximumDelay = number(value, at: at, minimum: 0) ?? maximumDelay
                case "reset_after": resetAfter = number(value, at: at, minimum: 0) ?? resetAfter
                case "within": within = number(value, at: at, minimum: 0, exclusive: true) ?? within
                case "max_restarts":
                    if value == .null {
                        maximumRestarts = nil
                    } else if let n = value.numberValue?.intValue, n >= 0 {
                        maximumRestarts = n
                    } else {
                        issue(at, "expected an integer ≥ 0 or null (no limit), found \(Describe.value(value))")
                    }
                default:
                    issue(at, "unknown restart setting \"\(key)\"\(Suggestions.hint(for: key, in: Self.restartKeys)) (known: \(Self.restartKeys.joined(separator: ", ")))")
                }
            }
        case let other?:
            issue("restart", "expected \"always\", \"on-failure\", \"never\" or an object with \"policy\", found \(Describe.value(other))")
        }
        if let value = object["stop_timeout"] { stopTimeout = number(value, at: "stop_timeout", minimum: 0) ?? stopTimeout }
        if let value = object["start_timeout"] { startTimeout = number(value, at: "start_timeout", minimum: 0, exclusive: true) ?? startTimeout }
        switch object["watchdog"] {
        case nil, .null?: break
        case .number(let n)? where n.doubleValue == 0: watchdog = nil
        case let value?: watchdog = number(value, at: "watchdog", minimum: 0, exclusive: true)
        }
    }

    static func format(_ value: Double) -> String {
        value.rounded() == value ? String(Int(value)) : String(value)
    }
}
