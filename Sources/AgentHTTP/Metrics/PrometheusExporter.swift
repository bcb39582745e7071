import AgentCommands
import JSONSchema
import CoreMetrics
import Metrics
import Prometheus
import Synchronization

/// The Prometheus side of `GET /metrics`: one registry of swift-prometheus holding the
/// agent's metric families (set from the `metrics` command's answer at each scrape) and the
/// HTTP front's own request counters (counted as requests finish, through swift-metrics).
///
/// The agent's counters are kept by the agent itself; at each scrape they are set to their
/// absolute values (`reset()`, then one `increment(by:)`, under the lock that also covers the
/// rendering, so no scrape sees the value in between) rather than incremented again here.
/// Series of processes or outputs that are gone are unregistered.
final class PrometheusExporter: Sendable {
    let registry = PrometheusCollectorRegistry()
    /// The swift-metrics factory over ``registry``, without bootstrapping the process-wide
    /// metrics system (nothing else in the agent reports through it).
    let factory: PrometheusMetricsFactory

    private enum Handle: Sendable {
        case counter(Prometheus.Counter)
        case gauge(Prometheus.Gauge)
    }

    /// The agent's series, by family name and labels, as last set.
    private let series = Mutex<[String: Handle]>([:])
    /// The HTTP request counters, by route, method and status.
    private let requestCounters = Mutex<[String: CoreMetrics.Counter]>([:])

    init() {
        factory = PrometheusMetricsFactory(registry: registry)
    }

    /// The Prometheus text for the `families` of a `metrics` answer and the request counters.
    func render(_ families: [JSONValue]) -> [UInt8] {
        series.withLock { series in
            var seen = Set<String>()
            for family in families {
                guard let name = family["name"]?.stringValue, let type = family["type"]?.stringValue else { continue }
                let help = family["help"]?.stringValue ?? ""
                for sample in family["samples"]?.arrayValue ?? [] {
                    let labels = (sample["labels"]?.objectValue ?? [:]).map { ($0.key, $0.value.stringValue ?? "") }.sorted { $0.0 < $1.0 }
                    let value = sample["value"]?.numberValue?.doubleValue ?? 0
                    let key = name + labels.map { "\u{0}\($0.0)=\($0.1)" }.joined()
                    seen.insert(key)
                    switch series[key] {
                    case .counter(let counter)?: Self.set(counter, to: value)
                    case .gauge(let gauge)?: gauge.set(to: value)
                    case nil where type == "counter":
                        let counter = registry.makeCounter(descriptor: Self.descriptor(name, help), labels: labels)
                        Self.set(counter, to: value)
                        series[key] = .counter(counter)
                    case nil:
                        let gauge = registry.makeGauge(descriptor: Self.descriptor(name, help), labels: labels)
                        gauge.set(to: value)
                        series[key] = .gauge(gauge)
                    }
                }
            }
            for (key, handle) in series where !seen.contains(key) {
                switch handle {
                case .counter(let counter): registry.unregisterCounter(counter)
                case .gauge(let gauge): registry.unregisterGauge(gauge)
                }
                series[key] = nil
            }
            var buffer: [UInt8] = []
            buffer.reserveCapacity(32 << 10)
            registry.emit(into: &buffer)
            return buffer
        }
    }

    /// The family's full name (its unit already in it) and help.
    private static func descriptor(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    /// A counter at the agent's absolute value (counts only grow, whole numbers stay whole).
    private static func set(_ counter: Prometheus.Counter, to value: Double) {
        counter.reset()
        guard value > 0, value.isFinite else { return }
        if let whole = Int64(exactly: value) {
            counter.increment(by: whole)
        } else {
            counter.increment(by: value)
        }
    }

    /// Methods counted by name; any other is counted as `other` (a label takes no value a
    /// client chose).
    static let knownMethods: Set<String> = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]

    /// Counts one request: `route` is the route template (`/api/processes/{name}/stop`),
    /// never the raw path.
    func countRequest(route: String, method: String, status: Int) {
        let method = Self.knownMethods.contains(method) ? method : "other"
        let key = "\(route) \(method) \(status)"
        let counter = requestCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: MetricDeclaration.httpRequests.name,
                dimensions: [("route", route), ("method", method), ("status", String(status))],
                factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }
}
