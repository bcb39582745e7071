import AgentModuleKit
import Foundation

/// Emits `count` events of `bytes` bytes each, one after the other, then nothing more: the
/// last of them has no follow-up that would push it through. With `interleave`, a
/// `small_event` of a few bytes follows each (those come through a worker's delivery ring,
/// the big ones on its socket, and must keep their order).
struct BigEvents: Datasource {
    struct Settings: SettingsDeclaration {
        @Setting(minimum: 2, maximum: 8 << 20, description: "Size of each payload (a JSON string).")
        var bytes: Int = 1 << 20
        @Setting(minimum: 1, description: "Number of events.")
        var count: Int = 1
        @Setting(minimum: 0, description: "Seconds to wait first, so that the subscribers are ready.")
        var startDelay: Double = 0.3
        @Setting(description: "Emit a small_event after each big_event.")
        var interleave: Bool = false
        @Setting(description: "Call exit(0) right after the last event instead of idling.")
        var exitAfter: Bool = false
    }

    static let typeName = "big_events"
    static let description = "Emits count big_event events of bytes bytes, then idles (or exits, with exit_after)."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: settings.startDelay)
        let payload = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "x"), count: settings.bytes - 2) + [UInt8(ascii: "\"")]
        for index in 0..<settings.count {
            try context.emit("big_event", bytes: payload)
            if settings.interleave { try context.emit("small_event", bytes: Array("\(index)".utf8)) }
        }
        if settings.exitAfter { exit(0) }
        while true { try await context.sleep(seconds: 3600) }
    }
}
