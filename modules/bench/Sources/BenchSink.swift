import AgentModuleKit
import Foundation

/// Counts `bench` events, checks that their sequence numbers arrive in order without gaps,
/// and measures each one's latency (receipt time minus the time the host stamped at emission).
/// On `bench_end` it sends its results as a message (JSON text) and starts over.
struct BenchSink: Monitor {
    struct Settings: Decodable, Sendable {}

    static let typeName = "bench_sink"
    static let description = "Counts `bench` events, checks their order and measures their latency; reports as a JSON message on `bench_end`."
    static let subscribes = [BenchPayload.eventType, BenchPayload.endType]
    static var settingsSchema: Schema { .object([:]) }

    init(settings: Settings) {}

    func run(context: ProcessContext) async throws {
        var tally = BenchTally()
        for await event in context.events {
            let received = BenchClock.realtimeNanoseconds()
            let emitted = Int64((event.time.timeIntervalSince1970 * 1e9).rounded())
            if event.type == BenchPayload.eventType {
                tally.record(sequence: event.payload.withUnsafeBytes(BenchPayload.sequence), payloadBytes: event.payload.count,
                             emitted: emitted, received: received)
            } else if event.type == BenchPayload.endType {
                let expected = (try? event.decode([String: Int].self))?["count"] ?? -1
                context.send(tally.report(expected: expected))
                tally = BenchTally()
            }
        }
    }
}

/// What the sink has seen since the last `bench_end`.
struct BenchTally {
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

    /// The results as one line of JSON.
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
