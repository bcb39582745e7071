/// The runtime's version, shown by `--version` of every command.
public enum AgentVersion {
    /// Defined here only: every executable prints this.
    public static let current = "0.1.0"

    /// `NAME VERSION`, the line `--version` prints.
    public static func line(for command: String) -> String { "\(command) \(current)" }
}
