/// What a receiver of `bench` events has seen: count, order, and the latency of each (receipt
/// minus emission time), reported as the JSON the bench module's sink sends and agent-bench
/// reads (the bench sink and the socketpair baseline's receiver share it, so that both measure
/// the same way).
public struct BenchTally {
    public var count = 0
    public var outOfOrder = 0
    public var nextSequence = 0
    public var payloadBytes = 0
    public var firstEmitted: Int64 = 0
    public var lastEmitted: Int64 = 0
    public var firstReceived: Int64 = 0
    public var lastReceived: Int64 = 0
    public var latencies = LatencyHistogram()

    public init() {}

    @inlinable
    public mutating func record(sequence: Int?, payloadBytes bytes: Int, emitted: Int64, received: Int64) {
        if count == 0 {
            firstEmitted = emitted
            firstReceived = received
        }
        count += 1
        if sequence != nextSequence { outOfOrder += 1 }
        nextSequence = (sequence ?? nextSequence) + 1
        payloadBytes = bytes
        lastEmitted = emitted
        lastReceived = received
        latencies.record(received - emitted)
    }

    /// The results as one line of JSON.
    public func report(expected: Int) -> String {
        let fields: [(String, Int64)] = [
            ("expected", Int64(expected)), ("count", Int64(count)), ("out_of_order", Int64(outOfOrder)),
            ("payload_bytes", Int64(payloadBytes)),
            ("first_emitted_ns", firstEmitted), ("last_emitted_ns", lastEmitted),
            ("first_received_ns", firstReceived), ("last_received_ns", lastReceived),
            ("latency_p50_ns", latencies.percentile(0.5)), ("latency_p99_ns", latencies.percentile(0.99)),
            ("latency_max_ns", latencies.maximum),
        ]
        return #"{"bench_result":{"# + fields.map { #""\#($0.0)":\#($0.1)"# }.joined(separator: ",") + "}}"
    }
}

/// Latencies in nanoseconds, counted in buckets 1/64 of a power of two wide (a value is
/// reported as its bucket's upper bound, at most 1.6 % above it): recording is an increment,
/// with no array growing by a million entries and no sort of them for the report, which
/// weighed on the receiver's CPU per event.
public struct LatencyHistogram {
    @usableFromInline static var subBuckets: Int { 64 }
    @usableFromInline var counts = [Int](repeating: 0, count: 64 * 37)
    public var total = 0
    public var maximum: Int64 = 0

    public init() {}

    @inlinable
    static func bucket(_ value: UInt64) -> Int {
        let magnitude = 63 - (value | 1).leadingZeroBitCount
        guard magnitude >= 6 else { return Int(value) }
        let shift = magnitude - 6
        return subBuckets + shift * subBuckets + Int(value >> UInt64(shift)) - subBuckets
    }

    /// The largest value that falls in `bucket`.
    private static func upperBound(_ bucket: Int) -> Int64 {
        guard bucket >= subBuckets else { return Int64(bucket) }
        let shift = bucket / subBuckets - 1
        let mantissa = bucket % subBuckets + subBuckets
        return Int64(((mantissa + 1) << shift) - 1)
    }

    /// Counts `value` (a negative one, from clocks stepped apart, as 0; one over 2^40 ns, 18
    /// minutes, in the last bucket).
    @inlinable
    public mutating func record(_ value: Int64) {
        let clamped = max(0, value)
        counts[Self.bucket(UInt64(min(clamped, 1 << 40 - 1)))] += 1
        total += 1
        if clamped > maximum { maximum = clamped }
    }

    /// The smallest bucket bound that at least `fraction` of the values are at or below (the
    /// maximum itself when that is smaller).
    public func percentile(_ fraction: Double) -> Int64 {
        guard total > 0 else { return 0 }
        let rank = max(1, Int((Double(total) * fraction).rounded(.up)))
        var seen = 0
        for (bucket, count) in counts.enumerated() where count > 0 {
            seen += count
            if seen >= rank { return min(Self.upperBound(bucket), maximum) }
        }
        return maximum
    }
}
