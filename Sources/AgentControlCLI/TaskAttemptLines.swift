import JSONSchema

/// `task show`'s attempts, for people: one heading line per attempt (number, status, times,
/// exit status, executor, agent), its error, and the last lines of its stderr and stdout.
extension TaskCommand {
    /// Lines of each tail shown (`--json` shows the whole tail).
    static let tailLines = 20

    static func attemptLines(_ answer: JSONValue) -> String {
        let attempts = answer["attempts"]?.arrayValue ?? []
        var lines = ["attempts: \(attempts.count)" + (answer["attempts_not_kept"]?.numberValue.map { " (\($0) more not kept)" } ?? "")]
        for attempt in attempts {
            var head = "  #\(attempt["attempt"]?.numberValue?.intValue ?? 0)  \(attempt["status"]?.stringValue ?? "?")"
            if let start = attempt["started_at"]?.stringValue { head += "  started \(start)" }
            if let end = attempt["ended_at"]?.stringValue { head += "  ended \(end)" }
            if let code = attempt["exit_code"]?.numberValue { head += "  exit \(code)" }
            if let signal = attempt["signal"]?.stringValue { head += "  \(signal)" }
            head += "  executor \(attempt["executor"]?.stringValue ?? "(the task's own)")"
            if let agent = attempt["agent"]?.stringValue { head += "  agent \(agent)" }
            if attempt["from_run_record"] == true { head += "  (from the run's record)" }
            lines.append(head)
            if let error = attempt["error"]?.stringValue { lines.append("    error: \(Self.visible(Substring(error)))") }
            for (key, name) in [("stderr_tail", "stderr"), ("stdout_tail", "stdout")] {
                guard let tail = attempt[key]?.stringValue, !tail.isEmpty else { continue }
                let all = tail.split(separator: "\n", omittingEmptySubsequences: false)
                let cut = all.count > tailLines ? " (its last \(tailLines) lines; --json shows all \(all.count))" : ""
                lines.append("    \(name)\(cut):")
                lines += all.suffix(tailLines).map { "      " + Self.visible($0) }
            }
        }
        return lines.joined(separator: "\n")
    }

    /// A line of what a program wrote, safe for a terminal: control characters (an escape
    /// sequence would move the cursor or retitle the window) shown as `\u{1B}`, tabs kept.
    static func visible(_ line: Substring) -> String {
        guard line.unicodeScalars.contains(where: isControl) else { return String(line) }
        return line.unicodeScalars.map { isControl($0) ? "\\u{\(String($0.value, radix: 16, uppercase: true))}" : String($0) }.joined()
    }

    private static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar != "\t" && (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value))
    }
}
