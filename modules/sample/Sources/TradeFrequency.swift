import AgentModuleKit
import Foundation

/// Counts events per key (e.g. trades per pair) over a sliding window and alerts when a key
/// goes over the threshold; says so again when it is back under.
struct TradeFrequency: Monitor {
    struct Settings: SettingsDeclaration {
        @Setting(exclusiveMinimum: 0, description: "Length of the sliding window, in seconds.")
        var window: Double = 60
        @Setting(minimum: 1, description: "Alert when more events than this fall in the window.")
        var threshold: Int = 10
        @Setting(minLength: 1, description: "Payload field to count by.")
        var key: String = "pair"
        @Setting(minimum: 0, description: "Seconds between summaries of the window from the store (0: none).")
        var reportEvery: Double = 60
    }

    static let typeName = "trade_frequency"
    static let description = "Counts trades per pair over a sliding window and alerts when a pair is busier than the threshold."
    static let subscribes = ["trade"]
    /// A summary from the store: events per key over the window, every `report_every` seconds.
    static let queries = [
        PeriodicQuery(
            name: "counts",
            sql: """
                SELECT json_extract(payload, '$.' || :key) AS key, count(*) AS n FROM events
                WHERE type = 'trade' AND time >= :since GROUP BY key ORDER BY n DESC, key
                """,
            every: .setting("report_every"), window: .setting("window")),
    ]

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        var window = SlidingCounter(length: settings.window)
        var alerting: Set<String> = []
        for await event in context.events {
            if let result = event.queryResult() {
                let counts = result.rows.map { "\($0["key"] ?? "?") \($0["n"] ?? 0)" }
                context.send("last \(Self.format(settings.window)) s: " + (counts.isEmpty ? "no trades" : counts.joined(separator: ", ")))
                continue
            }
            guard let object = try? JSONSerialization.jsonObject(with: Data(event.payload)) as? [String: Any],
                  let key = object[settings.key].map({ "\($0)" })
            else {
                context.log("event \(event.type) from \(event.source) has no \"\(settings.key)\" field", level: .debug)
                continue
            }
            let now = event.time.timeIntervalSince1970
            let count = window.add(key, at: now)
            if count > settings.threshold, !alerting.contains(key) {
                alerting.insert(key)
                context.alert("\(key): \(count) \(event.type) events in the last \(Self.format(settings.window)) s (threshold \(settings.threshold))")
                try context.emit("frequency_alert", payload: FrequencyAlert(key: key, count: count, window: settings.window))
            } else if count <= settings.threshold, alerting.contains(key) {
                alerting.remove(key)
                context.send("\(key): back to \(count) \(event.type) events in \(Self.format(settings.window)) s")
            }
        }
    }

    static func format(_ seconds: Double) -> String {
        seconds.rounded() == seconds && abs(seconds) < 1e15 ? String(Int(saturating: seconds)) : String(seconds)
    }
}

/// The payload of `frequency_alert`: numbers as numbers, so that a condition on them
/// (`{"properties": {"count": {"minimum": 100}}}`) compares numbers.
struct FrequencyAlert: Encodable {
    /// The value of the counted field (the pair, by default).
    var key: String
    /// Events of that key in the window.
    var count: Int
    /// The window, in seconds.
    var window: Double
}

/// Per-key timestamps within the last `length` seconds.
struct SlidingCounter {
    let length: Double
    private var times: [String: [Double]] = [:]
    private var heads: [String: Int] = [:]

    init(length: Double) { self.length = length }

    /// Records one event for `key` at `time` and returns how many fall in the window.
    mutating func add(_ key: String, at time: Double) -> Int {
        var list = times[key, default: []]
        var head = heads[key, default: 0]
        list.append(time)
        while head < list.count, list[head] <= time - length { head += 1 }
        if head > 1024, head * 2 > list.count {
            list.removeFirst(head)
            head = 0
        }
        times[key] = list
        heads[key] = head
        return list.count - head
    }
}
