import AgentModuleKit
import Foundation

/// Watches numeric fields of events (by default `host_stats`) and alerts when one stays above
/// its limit for a given time; says so again when it recovers.
struct ThresholdMonitor: Monitor {
    struct Rule: SettingsDeclaration {
        @Setting(minLength: 1, description: "Payload field to watch, e.g. cpu_percent.")
        var metric: String
        @Setting(description: "Alert when the value is above this.")
        var above: Double
        @Setting(minimum: 0, description: "How long it must stay above before the alert (default 0).")
        var forSeconds: Double?
    }

    struct Settings: SettingsDeclaration {
        @Setting(description: "The limits to watch.")
        var rules: [Rule] = [
            Rule(metric: "cpu_percent", above: 90, forSeconds: 30),
            Rule(metric: "memory_percent", above: 90, forSeconds: 30),
            Rule(metric: "disk_percent", above: 95),
        ]
    }

    static let typeName = "threshold_monitor"
    static let description = "Alerts when a metric of `host_stats` events (e.g. cpu_percent) stays above a limit for a while."
    static let subscribes = ["host_stats"]

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        var tracker = ThresholdTracker(rules: settings.rules.map { .init(metric: $0.metric, above: $0.above, forSeconds: $0.forSeconds ?? 0) })
        for await event in context.events {
            guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload)) as? [String: Any] else { continue }
            let values = object.compactMapValues { ($0 as? NSNumber)?.doubleValue }
            for change in tracker.observe(values, at: event.time.timeIntervalSince1970) {
                switch change {
                case .alert(let rule, let value):
                    context.alert("\(rule.metric) is \(value) (above \(rule.above)\(rule.forSeconds > 0 ? " for \(rule.forSeconds) s" : "")) on \(event.source)")
                    try context.emit("threshold_alert", payload: ThresholdAlert(metric: rule.metric, value: value, above: rule.above))
                case .recovered(let rule, let value):
                    context.send("\(rule.metric) is back to \(value) (limit \(rule.above)) on \(event.source)")
                }
            }
        }
    }
}

/// The payload of `threshold_alert`: numbers as numbers, so that a trigger's condition on
/// them (`{"properties": {"value": {"minimum": 95}}}`) compares numbers.
struct ThresholdAlert: Encodable {
    /// The payload field watched.
    var metric: String
    /// Its value when the alert fired.
    var value: Double
    /// The rule's limit.
    var above: Double
}

extension ThresholdMonitor.Rule {
    init(metric: String, above: Double, forSeconds: Double? = nil) {
        self.init()
        self.metric = metric
        self.above = above
        self.forSeconds = forSeconds
    }
}

/// The state machine behind the monitor, kept apart so that it is easy to test.
struct ThresholdTracker {
    struct Rule: Sendable, Equatable { var metric: String; var above: Double; var forSeconds: Double }
    enum Change: Equatable { case alert(Rule, Double), recovered(Rule, Double) }

    let rules: [Rule]
    private var since: [Int: Double] = [:]
    private var alerting: Set<Int> = []

    init(rules: [Rule]) { self.rules = rules }

    mutating func observe(_ values: [String: Double], at time: Double) -> [Change] {
        var changes: [Change] = []
        for (index, rule) in rules.enumerated() {
            guard let value = values[rule.metric] else { continue }
            if value > rule.above {
                let start = since[index] ?? time
                since[index] = start
                if !alerting.contains(index), time - start >= rule.forSeconds {
                    alerting.insert(index)
                    changes.append(.alert(rule, value))
                }
            } else {
                since[index] = nil
                if alerting.remove(index) != nil { changes.append(.recovered(rule, value)) }
            }
        }
        return changes
    }
}
