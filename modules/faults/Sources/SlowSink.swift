import AgentModuleKit
import Foundation

/// A monitor that takes `delay_ms` per event: a slow consumer, to test back-pressure.
struct SlowSink: Monitor {
    struct Settings: Decodable, Sendable {
        var delay_ms: Int
    }

    static let typeName = "slow_sink"
    static let description = "Receives fault_tick events and spends delay_ms on each: a slow consumer."
    static let subscribes = ["fault_tick"]
    static var settingsSchema: Schema {
        .object(["delay_ms": .integer(minimum: 0, default: 100, description: "Milliseconds spent on each event.")])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        for await _ in context.events {
            try await context.sleep(seconds: Double(settings.delay_ms) / 1000)
        }
    }
}
