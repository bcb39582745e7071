import JSONSchema

/// What a receiver reported about one stream of `bench` events (the bench module's sink or
/// the socketpair baseline's receiver).
struct RoutingResult {
    var expected: Int
    var count: Int
    var outOfOrder: Int
    var payloadBytes: Int
    var firstEmitted: Int64
    var lastEmitted: Int64
    var firstReceived: Int64
    var lastReceived: Int64
    var latencyP50: Int64
    var latencyP99: Int64
    var latencyMax: Int64

    /// Events per second from the first emission to the last receipt.
    var throughput: Double { Double(count) / (Double(max(1, lastReceived - firstEmitted)) / 1e9) }
    /// Events per second the producer emitted.
    var emitRate: Double { Double(count) / (Double(max(1, lastEmitted - firstEmitted)) / 1e9) }

    /// Whether every event arrived, once, in order.
    var isComplete: Bool { count == expected && outOfOrder == 0 }

    init?(json text: String) {
        guard let object = (try? JSONValue.parse(text))?["bench_result"]?.objectValue else { return nil }
        func int(_ key: String) -> Int64 { Int64(object[key]?.numberValue?.intValue ?? -1) }
        expected = Int(int("expected"))
        count = Int(int("count"))
        outOfOrder = Int(int("out_of_order"))
        payloadBytes = Int(int("payload_bytes"))
        firstEmitted = int("first_emitted_ns")
        lastEmitted = int("last_emitted_ns")
        firstReceived = int("first_received_ns")
        lastReceived = int("last_received_ns")
        latencyP50 = int("latency_p50_ns")
        latencyP99 = int("latency_p99_ns")
        latencyMax = int("latency_max_ns")
    }
}
