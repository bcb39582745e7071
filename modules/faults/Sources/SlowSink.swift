import AgentModuleKit
import Foundation

/// A monitor that takes `delay_ms` per event: a slow consumer, to test back-pressure.
struct SlowSink: Monitor {
    struct Settings: SettingsDeclaration {
        @Setting(minimum: 0, description: "Milliseconds spent on each event.")
        var delayMs: Int = 100
        @Setting(description: "Save the number of events taken as the state after each one, and log it every 10.")
        var saveState: Bool = false
        @Setting(description: "Log the type and size of each event taken.")
        var logEvents: Bool = false
        @Setting(minimum: 0, description: "Exit with status 3 after taking this many events (0: never).")
        var exitAfter: Int = 0
        @Setting(description: "A file: with exit_after, exit only if it does not exist, and create it (so that only the first life exits).")
        var exitAfterOnce: String = ""
        @Setting(minimum: 0, description: "Milliseconds to wait before taking the first event (what arrives meanwhile waits in the queue).")
        var startDelayMs: Int = 0
        @Setting(minimum: 0, description: "With log_events, also log this many bytes of each payload, as text.")
        var logPayloadPrefix: Int = 0
        @Setting(description: "With log_events, also log each event's source.")
        var logSource: Bool = false
        @Setting(description: "A file: if it does not exist, create it, wait 0.5 s without taking events, and exit with status 3 (a death with events on the way; once, since the next life finds the file).")
        var exitOnceBeforeTaking: String = ""
    }

    static let typeName = "slow_sink"
    static let description = "Receives fault_tick events and spends delay_ms on each: a slow consumer."
    static let subscribes = ["fault_tick"]

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        let marker = settings.exitOnceBeforeTaking
        if !marker.isEmpty, !FileManager.default.fileExists(atPath: marker) {
            _ = FileManager.default.createFile(atPath: marker, contents: nil)
            try await context.sleep(seconds: 0.5)
            context.log("exiting before taking any event")
            exit(3)
        }
        if settings.startDelayMs > 0 { try await context.sleep(seconds: Double(settings.startDelayMs) / 1000) }
        var taken = 0
        for await event in context.events {
            try await context.sleep(seconds: Double(settings.delayMs) / 1000)
            taken += 1
            if settings.logEvents {
                let prefix = settings.logPayloadPrefix > 0 ? " " + String(decoding: event.payload.prefix(settings.logPayloadPrefix), as: UTF8.self) : ""
                let from = settings.logSource ? " from \(event.source)" : ""
                context.log("took \(event.type) #\(taken)\(from): \(event.payload.count) bytes\(prefix)")
            }
            if taken == settings.exitAfter, settings.exitAfterOnce.isEmpty || !FileManager.default.fileExists(atPath: settings.exitAfterOnce) {
                if !settings.exitAfterOnce.isEmpty { _ = FileManager.default.createFile(atPath: settings.exitAfterOnce, contents: nil) }
                context.log("exiting after \(taken) events")
                exit(3)
            }
            if settings.saveState {
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
