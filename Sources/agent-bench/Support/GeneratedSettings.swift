/// The settings files the bench runs: idle workers, a source and a sink, and a large mixed
/// agent for the validation figure.
enum GeneratedSettings {
    /// Host-level restart policy: restart at once, without a start limit.
    static let zeroBackoff = #""restart": {"initial_delay": 0, "max_restarts": null}"#

    /// The host-level `store` key: nothing (the default: on, at `.agent/data/agent.sqlite`)
    /// or the store turned off.
    static func storeKey(_ store: Bool) -> String { store ? "" : #""store": {"enabled": false},"# }

    /// `count` processes that do nothing (`bench_idle`); the store on unless `store` is false;
    /// `http` is a host-level `"http": {…}` member to add (the HTTP server on).
    static func idle(count: Int, zeroBackoff: Bool = false, store: Bool = true, http: String? = nil) -> String {
        let restart = zeroBackoff ? ", " + Self.zeroBackoff : ""
        let processes = (0..<count).map { #""idle\#($0)": {"type": "bench_idle"\#(restart)}"# }
        return #"{"enabled_modules": ["bench"], "# + storeKey(store) + httpKey(http) + #" "processes": {"# + processes.joined(separator: ",\n ") + "}}"
    }

    /// `"http": {…},` or nothing.
    static func httpKey(_ http: String?) -> String { http.map { " \($0)," } ?? "" }

    /// A `bench_source` named `source` and a `bench_sink` named `sink`, with the store on or off.
    /// The sink's queue blocks the source when full (`"when_full": "block"`) rather than
    /// dropping the oldest events (the default), so that a sink that falls behind for a moment
    /// slows the source down instead of losing events: every run must deliver every event.
    static func routing(count: Int, payloadBytes: Int, rate: Double, startDelay: Double, store: Bool, http: String? = nil) -> String {
        """
        {"enabled_modules": ["bench"], \(storeKey(store))\(httpKey(http))
         "processes": {
           "source": {"type": "bench_source", "count": \(count), "payload_bytes": \(payloadBytes), "rate": \(rate), "start_delay": \(startDelay)},
           "sink": {"type": "bench_sink", "queue": {"when_full": "block"}}
         }}
        """
    }

    /// `count` processes of every type the shipped modules provide, with realistic settings
    /// and host-level keys; every one is valid, one in ten is disabled.
    static func large(processes count: Int) -> String {
        var entries: [String] = []
        for index in 0..<count {
            let enabled = index % 10 == 9 ? #", "enabled": false"# : ""
            let restart = index % 4 == 0 ? #", "restart": {"policy": "on-failure", "initial_delay": 0.5, "max_restarts": 5, "within": 60}, "stop_timeout": 3"# : ""
            let body: String
            switch index % 6 {
            case 0: body = #""type": "trade_feed", "pairs": ["ETH/USD", "BTC/USD", "SOL/EUR"], "interval": 0.5, "seed": \#(index)"#
            case 1: body = #""type": "trade_frequency", "window": 60, "threshold": \#(10 + index % 7), "key": "pair""#
            case 2: body = #""type": "host_stats", "interval": 5, "disk_path": "/""#
            case 3: body = #""type": "threshold_monitor", "rules": [{"metric": "cpu_percent", "above": 90, "for_seconds": 30}, {"metric": "memory_percent", "above": 80}]"#
            case 4: body = #""type": "bench_source", "count": 1000, "payload_bytes": 256, "rate": 10"#
            default: body = #""type": "bench_sink", "subscribe": ["bench", "bench_end"]"#
            }
            entries.append(#""process-\#(index)": {\#(body)\#(enabled)\#(restart)}"#)
        }
        return #"{"enabled_modules": ["system", "sample", "bench"],"# + "\n \"processes\": {\n  " + entries.joined(separator: ",\n  ") + "\n }}\n"
    }
}
