import AgentRuntime

/// agent-control's exit statuses: one table for every command, which the root command's
/// discussion states (and with it the man page's EXIT STATUS) and every `--help` ends with, so
/// that no command documents codes of its own. The values are ``AgentLauncher/ExitCode``'s.
public enum ExitStatus {
    /// One status and what it means.
    public struct Row: Sendable {
        public var code: Int32
        public var meaning: String
    }

    public static let rows: [Row] = [
        Row(code: AgentLauncher.ExitCode.success,
            meaning: "success; `console` after a clean stop; `stop` also when the agent was not running"),
        Row(code: AgentLauncher.ExitCode.failure,
            meaning: """
            failure: the agent refused the request (no such process, task, run, schedule, workflow, key or executor; \
            an input that fails its schema; a settings change refused), did not answer or is already running; a module \
            failed to build; `run --wait`: the run did not succeed
            """),
        Row(code: AgentLauncher.ExitCode.invalidConfiguration,
            meaning: """
            the settings or a module are invalid (nothing is started or changed; also a change that would make them \
            invalid), or there is no settings file
            """),
        Row(code: AgentLauncher.ExitCode.notRunning,
            meaning: """
            the agent is not running (a command that needs it; `task runs`, `task show`, `workflow runs`, \
            `workflow show` and `schedule history` read its store instead, as `events` and `history` do)
            """),
        Row(code: AgentLauncher.ExitCode.usage,
            meaning: "usage error: an unknown command or option, a bad argument or option value, `-C` to a missing folder"),
    ]

    /// For the root command's discussion, one sentence that the man page's EXIT STATUS takes:
    /// "Exit status, the same for every command: 0 …; 1 …; …".
    public static var sentence: String {
        "Exit status, the same for every command: " + rows.map { "\($0.code) \($0.meaning)" }.joined(separator: "; ") + "."
    }

    /// The end of every `--help`: the table, its meanings wrapped under each other.
    public static var help: String {
        var lines = ["EXIT STATUS (every command):"]
        for row in rows {
            let code = String(row.code)
            var line = "  " + code + String(repeating: " ", count: max(1, 4 - code.count))
            for word in row.meaning.split(separator: " ") {
                if line.count + word.count + 1 > 80, line.count > 6 {
                    lines.append(line)
                    line = String(repeating: " ", count: 6)
                }
                line += (line.hasSuffix(" ") ? "" : " ") + word
            }
            lines.append(line)
        }
        return lines.joined(separator: "\n")
    }
}
