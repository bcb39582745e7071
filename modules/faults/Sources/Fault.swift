import AgentModuleKit
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Emits `fault_tick` events, then misbehaves the way `mode` says after `after_ms`.
struct Fault: Datasource {
    /// What goes wrong.
    enum Mode: String, SettingEnum {
        case exit, segfault, abort, hang
        case ignoreStop = "ignore_stop"
        case grandchild, children, healthy
    }

    struct Settings: SettingsDeclaration {
        @Setting(description: "What goes wrong.")
        var mode: Mode = .healthy
        @Setting(minimum: 0, description: "Milliseconds of normal work before the fault.")
        var afterMs: Int = 100
        @Setting(minimum: 0, maximum: 255, description: "Exit status for mode exit.")
        var exitCode: Int = 1
        @Setting(minimum: 0, description: "Milliseconds between events (0: as fast as possible).")
        var tickMs: Int = 50
        @Setting(minLength: 1, description: "Type of the events it emits.")
        var eventType: String = "fault_tick"
        @Setting(minimum: 0, maximum: 10_000_000,
                 description: "Lines it writes at start to stdout (`stdout line N`) and to stderr (`stderr line N`), before anything else.")
        var printLines: Int = 0
        @Setting(minimum: 0, maximum: 16_777_216, description: "Pads each printed line with `x` to this many bytes (0: no padding).")
        var printLineBytes: Int = 0
    }

    static let typeName = "fault"
    static let description = "Misbehaves on purpose (exit, segfault, abort, hang, ignore_stop, grandchild, children, healthy) to test supervision."

    let settings: Settings

    init(settings: Settings) { self.settings = settings }

    func run(context: ProcessContext) async throws {
        if settings.printLines > 0 { Self.printLines(settings.printLines, padTo: settings.printLineBytes) }
        if settings.mode == .ignoreStop {
            context.log("ignoring stop requests from now on")
            while true { usleep(100_000) }
        }
        if settings.mode == .grandchild {
            let child = Process()
            child.executableURL = URL(fileURLWithPath: "/bin/sleep")
            child.arguments = ["1000"]
            try child.run()
            try context.emit("grandchild", payload: ["pid": Int(child.processIdentifier)])
        }
        if settings.mode == .children {
            try context.emit("children", payload: try Self.startChildren())
        }
        let start = Date()
        var tick = 0
        while true {
            tick += 1
            try context.emit(settings.eventType, payload: ["tick": tick])
            if Date().timeIntervalSince(start) * 1000 >= Double(settings.afterMs) {
                switch settings.mode {
                case .exit:
                    context.log("exiting after tick \(tick)")
                    exit(Int32(clamping: settings.exitCode))
                case .segfault: raise(SIGSEGV)
                case .abort: abort()
                case .hang:
                    context.log("hanging now")
                    while true { usleep(100_000) }
                default: break
                }
            }
            if settings.tickMs > 0 || tick % 100 == 0 {
                try await context.sleep(seconds: Double(settings.tickMs) / 1000)
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
