import AgentCore
import Foundation
import Logging
import Synchronization

/// Colours for a person at a terminal: log levels, alerts and errors. Plain text whenever the
/// output is not a terminal, `NO_COLOR` is set to anything non-empty (no-color.org), `TERM` is
/// `dumb`, or the command was given `--no-color`.
public struct TerminalStyle: Sendable {
    /// Whether escape sequences are written.
    public let colored: Bool

    public init(colored: Bool) { self.colored = colored }

    /// No colours at all.
    public static let plain = TerminalStyle(colored: false)

    /// Set once by `--no-color`, before anything is printed; every style made after says plain.
    package static let disabledByFlag = Atomic<Bool>(false)

    /// `--no-color`: plain text for the rest of the process.
    public static func disableColors() { disabledByFlag.store(true, ordering: .relaxed) }

    /// The style for output written to `fd`.
    public static func forDescriptor(_ fd: Int32,
                                     environment: [String: String] = ProcessInfo.processInfo.environment) -> TerminalStyle {
        if disabledByFlag.load(ordering: .relaxed) { return .plain }
        if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return .plain }
        if environment["TERM"] == "dumb" { return .plain }
        return TerminalStyle(colored: isatty(fd) == 1)
    }

    /// SGR parameters of the few colours used.
    public enum Color: String, Sendable {
        case dim = "2", bold = "1", red = "31", boldRed = "1;31", green = "32", yellow = "33", cyan = "36"
    }

    /// `text` in `color` (then reset), or `text` as it is when plain.
    public func paint(_ text: String, _ color: Color) -> String {
        colored ? "\u{1B}[\(color.rawValue)m\(text)\u{1B}[0m" : text
    }

    /// A log level's name padded to 7 columns (the padding outside the colour, so that columns
    /// line up with and without it).
    public func level(_ level: Logger.Level) -> String {
        let name = level.rawValue
        let padding = String(repeating: " ", count: max(0, 7 - name.count))
        let color: Color? = switch level {
        case .trace, .debug: .dim
        case .info: .green
        case .notice: .cyan
        case .warning: .yellow
        case .error: .red
        case .critical: .boldRed
        }
        return (color.map { paint(name, $0) } ?? name) + padding
    }

    /// The colour of a process message at `level` (0 debug … 4 critical, as ``ConsoleOutput``).
    public func messageColor(level: Int) -> Color? {
        switch level {
        case ...0: .dim
        case 1: nil
        case 2: .yellow
        case 3: .red
        default: .boldRed
        }
    }

    /// Writes `error: TEXT` (the word in bold red on a terminal) on stderr. An error often
    /// repeats what it refuses (a name, a value): its controls are shown, not obeyed.
    public static func printError(_ text: String) {
        let style = forDescriptor(STDERR_FILENO)
        FileHandle.standardError.write(Data("\(style.paint("error:", .boldRed)) \(TerminalText.shown(text))\n".utf8))
    }
}
