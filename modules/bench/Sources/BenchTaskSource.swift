import AgentModuleKit

/// Feeds figure 10's task runs through an `on_event` trigger: emits `warmup` `bench_task`
/// events, waits `pause` seconds, then `count` more, each as fast as it can or at `rate` per
/// second, then idles. Each payload carries the time it was emitted (CLOCK_REALTIME, ns,
/// taken right before the emit), which the task handler compares with its own start.
struct BenchTaskSource: Datasource {
    struct Settings: SettingsDeclaration {
        @Setting(minimum: 0, maximum: 100_000_000, description: "`bench_task` events of the measured burst.")
        var count: Int = 20_000
        @Setting(minimum: 0, maximum: 1_000_000, description: "`bench_task` events before the burst (phase \"warmup\").")
        var warmup: Int = 500
        @Setting(minimum: 0, description: "Seconds between the warm-up and the burst.")
        var pause: Double = 1
        @Setting(minimum: 0, description: "Events per second; 0 emits as fast as possible.")
        var rate: Double = 0
        @Setting(minimum: 0, description: "Seconds to wait before the first event.")
        var startDelay: Double = 0.5
    }

    static let eventType = "bench_task"
    static let typeName = "bench_task_source"
    static let description = "Emits `warmup` then, after `pause` seconds, `count` `bench_task` events whose payload carries its emit time in ns (`sent_ns`), to trigger task runs."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: settings.startDelay)
        try emit(settings.warmup, phase: "warmup", context: context)
        try await context.sleep(seconds: settings.pause)
        try emit(settings.count, phase: "burst", context: context)
        while true { try await context.sleep(seconds: 3600) }
    }

    private func emit(_ count: Int, phase: String, context: ProcessContext) throws {
        let start = BenchClock.monotonicNanoseconds()
        let interval = settings.rate > 0 ? 1e9 / settings.rate : 0
        for sequence in 0..<count {
            if interval > 0 {
                let due = start.addingReportingOverflow(Int64(saturating: Double(sequence) * interval)).partialValue
                if BenchClock.monotonicNanoseconds() < due { BenchClock.sleep(untilMonotonic: due) }
            }
            try context.emit(Self.eventType, json: #"{"phase":"\#(phase)","seq":\#(sequence),"sent_ns":\#(BenchClock.realtimeNanoseconds())}"#)
        }
    }
}
