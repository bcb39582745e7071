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
        var print_lines: Int
        var print_line_bytes: Int
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
            "print_lines": .integer(minimum: 0, maximum: 10_000_000, default: 0,
                                    description: "Lines it writes at start to stdout (`stdout line N`) and to stderr (`stderr line N`), before anything else."),
            "print_line_bytes": .integer(minimum: 0, maximum: 16_777_216, default: 0,
                                         description: "Pads each printed line with `x` to this many bytes (0: no padding)."),
        ])
    }

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        if settings.print_lines > 0 { Self.printLines(settings.print_lines, padTo: settings.print_line_bytes) }
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

    /// Writes `count` numbered lines to stdout and to stderr, straight to the fds (no stdio
    /// buffer to lose at a crash).
    static func printLines(_ count: Int, padTo width: Int) {
        for index in 1...count {
            for (fd, name) in [(Int32(1), "stdout"), (Int32(2), "stderr")] {
                var line = "\(name) line \(index)"
                if line.utf8.count < width { line += String(repeating: "x", count: width - line.utf8.count) }
                line += "\n"
                var bytes = Array(line.utf8)
                var offset = 0
                while offset < bytes.count {
                    let n = bytes.withUnsafeMutableBytes { write(fd, $0.baseAddress! + offset, $0.count - offset) }
                    if n < 0, errno == EINTR { continue }
                    if n <= 0 { break }
                    offset += n
                }
            }
        }
    }
}
