import AgentModuleKit

/// Emits `burst` events of `out_type` at once, then one for each event it takes: two relays
/// that subscribe to each other's type make a cycle of subscriptions, to test that blocking
/// queues in a cycle still drain.
struct Relay: Monitor {
    struct Settings: Decodable, Sendable {
        var out_type: String
        var burst: Int
        var bytes: Int
        var report_every: Int
    }

    static let typeName = "relay"
    static let description = "Emits burst out_type events, then one per event taken (subscribe it with the host's subscribe key)."
    static let subscribes: [String] = []
    static var settingsSchema: Schema {
        .object([
            "out_type": .string(minLength: 1, description: "The type of the events it emits."),
            "burst": .integer(minimum: 0, default: 100_000, description: "Events emitted at once at the start."),
            "bytes": .integer(minimum: 2, default: 100, description: "Size of each payload (a JSON string)."),
            "report_every": .integer(minimum: 1, default: 50_000, description: "Log the number of events taken every this many."),
        ], required: ["out_type"])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: 0.3)
        let payload = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "x"), count: settings.bytes - 2) + [UInt8(ascii: "\"")]
        for _ in 0..<settings.burst { try context.emit(settings.out_type, bytes: payload) }
        var taken = 0
        for await _ in context.events {
            taken += 1
            try context.emit(settings.out_type, bytes: payload)
            if taken % settings.report_every == 0 { context.log("relayed \(taken)") }
        }
    }
}
