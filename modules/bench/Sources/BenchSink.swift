import AgentModuleKit
import BenchSupport
import Foundation

/// Counts `bench` events, checks that their sequence numbers arrive in order without gaps,
/// and measures each one's latency (receipt time minus the time the host stamped at emission).
/// On `bench_end` it sends its results as a message (JSON text) and starts over.
struct BenchSink: Monitor {
    struct Settings: SettingsDeclaration {}

    static let typeName = "bench_sink"
    static let description = "Counts `bench` events, checks their order and measures their latency; reports as a JSON message on `bench_end`."
    static let subscribes = [BenchPayload.eventType, BenchPayload.endType]

    init(settings: Settings) {}

    func run(context: ProcessContext) async throws {
        var tally = BenchTally()
        for await event in context.events {
            let received = BenchClock.realtimeNanoseconds()
            let emitted = event.timeNanoseconds
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
