import AgentModuleKit

/// Emits `burst` events of `out_type` at once, then one for each event it takes: two relays
/// that subscribe to each other's type make a cycle of subscriptions, to test that blocking
/// queues in a cycle still drain.
struct Relay: Monitor {
    struct Settings: SettingsDeclaration {
        @Setting(minLength: 1, description: "The type of the events it emits.")
        var outType: String
        @Setting(minimum: 0, description: "Events emitted at once at the start.")
        var burst: Int = 100_000
        @Setting(minimum: 2, description: "Size of each payload (a JSON string).")
        var bytes: Int = 100
        @Setting(minimum: 1, description: "Log the number of events taken every this many.")
        var reportEvery: Int = 50_000
    }

    static let typeName = "relay"
    static let description = "Emits burst out_type events, then one per event taken (subscribe it with the host's subscribe key)."
    static let subscribes: [String] = []

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: 0.3)
        let payload = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "x"), count: settings.bytes - 2) + [UInt8(ascii: "\"")]
        for _ in 0..<settings.burst { try context.emit(settings.outType, bytes: payload) }
        var taken = 0
        for await _ in context.events {
            taken += 1
            try context.emit(settings.outType, bytes: payload)
            if taken % settings.reportEvery == 0 { context.log("relayed \(taken)") }
        }
    }
}
