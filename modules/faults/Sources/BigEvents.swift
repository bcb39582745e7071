import AgentModuleKit
import Foundation

/// Emits `count` events of `bytes` bytes each, one after the other, then nothing more: the
/// last of them has no follow-up that would push it through. With `interleave`, a
/// `small_event` of a few bytes follows each (those come through a worker's delivery ring,
/// the big ones on its socket, and must keep their order).
struct BigEvents: Datasource {
    struct Settings: Decodable, Sendable {
        var bytes: Int
        var count: Int
        var start_delay: Double
        var interleave: Bool
        var exit_after: Bool
    }

    static let typeName = "big_events"
    static let description = "Emits count big_event events of bytes bytes, then idles (or exits, with exit_after)."
    static var settingsSchema: Schema {
        .object([
            "bytes": .integer(minimum: 2, maximum: 8 << 20, default: 1 << 20, description: "Size of each payload (a JSON string)."),
            "count": .integer(minimum: 1, default: 1, description: "Number of events."),
            "start_delay": .number(minimum: 0, default: 0.3, description: "Seconds to wait first, so that the subscribers are ready."),
            "interleave": .boolean(default: false, description: "Emit a small_event after each big_event."),
            "exit_after": .boolean(default: false, description: "Call exit(0) right after the last event instead of idling."),
        ])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        try await context.sleep(seconds: settings.start_delay)
        let payload = [UInt8(ascii: "\"")] + [UInt8](repeating: UInt8(ascii: "x"), count: settings.bytes - 2) + [UInt8(ascii: "\"")]
        for index in 0..<settings.count {
            try context.emit("big_event", bytes: payload)
            if settings.interleave { try context.emit("small_event", bytes: Array("\(index)".utf8)) }
        }
        if settings.exit_after { exit(0) }
        while true { try await context.sleep(seconds: 3600) }
    }
}
