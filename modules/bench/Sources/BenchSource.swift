import AgentModuleKit
import BenchSupport

/// Emits `count` numbered `bench` events of `payload_bytes` bytes, as fast as it can or at a
/// fixed `rate`, then one `bench_end` event, then idles until asked to stop.
struct BenchSource: Datasource {
    struct Settings: SettingsDeclaration {
        @Setting(minimum: 1, maximum: 9_999_999_999, description: "Number of `bench` events to emit.")
        var count: Int = 100_000
        @Setting(minimum: BenchPayload.minimumSize, maximum: 1 << 20,
                 description: "Size of each payload in bytes (JSON with a sequence number and padding).")
        var payloadBytes: Int = 100
        @Setting(minimum: 0, description: "Events per second; 0 emits as fast as possible.")
        var rate: Double = 0
        @Setting(minimum: 0, description: "Seconds to wait before the first event, so that the subscribers are ready.")
        var startDelay: Double = 0.5
    }

    static let typeName = "bench_source"
    static let description = "Emits `count` numbered `bench` events of `payload_bytes` bytes at `rate` per second (0: as fast as possible), then a `bench_end` event."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: settings.startDelay)
        var payload = BenchPayload.template(size: settings.payloadBytes)
        let start = BenchClock.monotonicNanoseconds()
        let interval = settings.rate > 0 ? 1e9 / settings.rate : 0
        for sequence in 0..<settings.count {
            if interval > 0 {
                let offset = start.addingReportingOverflow(Int64(saturating: Double(sequence) * interval))
                let due = offset.overflow ? Int64.max : offset.partialValue
                if BenchClock.monotonicNanoseconds() < due { BenchClock.sleep(untilMonotonic: due) }
            }
            BenchPayload.setSequence(sequence, in: &payload)
            try context.emit(BenchPayload.eventType, bytes: payload)
        }
        try context.emit(BenchPayload.endType, json: #"{"count":\#(settings.count)}"#)
        while true { try await context.sleep(seconds: 3600) }
    }
}
