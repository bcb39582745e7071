import AgentModuleKit
import Foundation

/// A monitor that takes `delay_ms` per event: a slow consumer, to test back-pressure.
struct SlowSink: Monitor {
    struct Settings: Decodable, Sendable {
        var delay_ms: Int
        var save_state: Bool
        var log_events: Bool
        var exit_after: Int
        var exit_once_before_taking: String
        var exit_after_once: String
        var log_payload_prefix: Int
        var start_delay_ms: Int
    }

    static let typeName = "slow_sink"
    static let description = "Receives fault_tick events and spends delay_ms on each: a slow consumer."
    static let subscribes = ["fault_tick"]
    static var settingsSchema: Schema {
        .object([
            "delay_ms": .integer(minimum: 0, default: 100, description: "Milliseconds spent on each event."),
            "save_state": .boolean(default: false, description: "Save the number of events taken as the state after each one, and log it every 10."),
            "log_events": .boolean(default: false, description: "Log the type and size of each event taken."),
            "exit_after": .integer(minimum: 0, default: 0, description: "Exit with status 3 after taking this many events (0: never)."),
            "exit_after_once": .string(default: "", description: "A file: with exit_after, exit only if it does not exist, and create it (so that only the first life exits)."),
            "start_delay_ms": .integer(minimum: 0, default: 0, description: "Milliseconds to wait before taking the first event (what arrives meanwhile waits in the queue)."),
            "log_payload_prefix": .integer(minimum: 0, default: 0, description: "With log_events, also log this many bytes of each payload, as text."),
            "exit_once_before_taking": .string(default: "", description: "A file: if it does not exist, create it, wait 0.5 s without taking events, and exit with status 3 (a death with events on the way; once, since the next life finds the file)."),
        ])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        let marker = settings.exit_once_before_taking
        if !marker.isEmpty, !FileManager.default.fileExists(atPath: marker) {
            _ = FileManager.default.createFile(atPath: marker, contents: nil)
            try await context.sleep(seconds: 0.5)
            context.log("exiting before taking any event")
            exit(3)
        }
        if settings.start_delay_ms > 0 { try await context.sleep(seconds: Double(settings.start_delay_ms) / 1000) }
        var taken = 0
        for await event in context.events {
            try await context.sleep(seconds: Double(settings.delay_ms) / 1000)
            taken += 1
            if settings.log_events {
                let prefix = settings.log_payload_prefix > 0 ? " " + String(decoding: event.payload.prefix(settings.log_payload_prefix), as: UTF8.self) : ""
                context.log("took \(event.type) #\(taken): \(event.payload.count) bytes\(prefix)")
            }
            if taken == settings.exit_after, settings.exit_after_once.isEmpty || !FileManager.default.fileExists(atPath: settings.exit_after_once) {
                if !settings.exit_after_once.isEmpty { _ = FileManager.default.createFile(atPath: settings.exit_after_once, contents: nil) }
                context.log("exiting after \(taken) events")
                exit(3)
            }
            if settings.save_state {
                do {
                    try context.saveState(["taken": taken])
                    if taken % 10 == 0 { context.log("saved \(taken)") }
                } catch let error as ProcessContextError where error.code == .storeUnavailable {
                    // A full disk is no reason to stop: the next save tries again.
                    if taken % 10 == 0 { context.log("not saved \(taken): \(error)", level: .warning) }
                }
            }
        }
    }
}
