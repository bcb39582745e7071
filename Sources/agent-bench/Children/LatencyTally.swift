/// What a receiver has seen of a stream of numbered events: count, order, and the latency of
/// each (receipt minus emission time), reported as the JSON the bench module's sink sends.
struct LatencyTally {
    var count = 0
    var outOfOrder = 0
    var nextSequence = 0
    var payloadBytes = 0
    var firstEmitted: Int64 = 0
    var lastEmitted: Int64 = 0
    var firstReceived: Int64 = 0
    var lastReceived: Int64 = 0
    var latencies: [Int64] = []

    mutating func record(sequence: Int?, payloadBytes bytes: Int, emitted: Int64, received: Int64) {
        if count == 0 {
            firstEmitted = emitted
            firstReceived = received
            latencies.reserveCapacity(1 << 16)
        }
        count += 1
        if sequence != nextSequence { outOfOrder += 1 }
        nextSequence = (sequence ?? nextSequence) + 1
        payloadBytes = bytes
        lastEmitted = emitted
        lastReceived = received
        latencies.append(received - emitted)
    }

    /// The results as one line of JSON (the fields ``RoutingResult`` reads).
    func report(expected: Int) -> String {
        let sorted = latencies.sorted()
        func percentile(_ p: Double) -> Int64 {
            sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.up)) - 1)]
        }
        let fields: [(String, Int64)] = [
            ("expected", Int64(expected)), ("count", Int64(count)), ("out_of_order", Int64(outOfOrder)),
            ("payload_bytes", Int64(payloadBytes)),
            ("first_emitted_ns", firstEmitted), ("last_emitted_ns", lastEmitted),
            ("first_received_ns", firstReceived), ("last_received_ns", lastReceived),
            ("latency_p50_ns", percentile(0.5)), ("latency_p99_ns", percentile(0.99)),
            ("latency_max_ns", sorted.last ?? 0),
        ]
        return #"{"bench_result":{"# + fields.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}}"
    }
}
