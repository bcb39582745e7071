import AgentModuleKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Emits `fault_tick` events, then misbehaves the way `mode` says after `after_ms`.
struct Fault: Datasource {
    struct Settings: Decodable, Sendable {
        var mode: String
        var after_ms: Int
        var exit_code: Int
        var tick_ms: Int
        var event_type: String
    }

    static let typeName = "fault"
    static let description = "Misbehaves on purpose (exit, segfault, abort, hang, ignore_stop, grandchild, children, healthy) to test supervision."
    static var settingsSchema: Schema {
        .object([
            "mode": .string(oneOf: ["exit", "segfault", "abort", "hang", "ignore_stop", "grandchild", "children", "healthy"],
                            default: "healthy", description: "What goes wrong."),
            "after_ms": .integer(minimum: 0, default: 100, description: "Milliseconds of normal work before the fault."),
            "exit_code": .integer(minimum: 0, maximum: 255, default: 1, description: "Exit status for mode exit."),
            "tick_ms": .integer(minimum: 0, default: 50, description: "Milliseconds between events (0: as fast as possible)."),
            "event_type": .string(minLength: 1, default: "fault_tick", description: "Type of the events it emits."),
        ])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        if settings.mode == "ignore_stop" {
            context.log("ignoring stop requests from now on")
            while true { usleep(100_000) }
        }
        if settings.mode == "grandchild" {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/bin/sleep")
            child.arguments = ["1000"]
            try child.run()
            try context.emit("grandchild", payload: ["pid": Int(child.processIdentifier)])
        }
        if settings.mode == "children" {
            try context.emit("children", payload: try Self.startChildren())
        }
        let start = Date()
        var tick = 0
        while true {
            tick += 1
            try context.emit(settings.event_type, payload: ["tick": tick])
            if Date().timeIntervalSince(start) * 1000 >= Double(settings.after_ms) {
                switch settings.mode {
                case "exit":
                    context.log("exiting after tick \(tick)")
                    exit(Int32(clamping: settings.exit_code))
                case "segfault": raise(SIGSEGV)
                case "abort": abort()
                case "hang":
                    context.log("hanging now")
                    while true { usleep(100_000) }
                default: break
                }
            }
            if settings.tick_ms > 0 || tick % 100 == 0 {
                try await context.sleep(seconds: Double(settings.tick_ms) / 1000)
            }
        }
    }
}
