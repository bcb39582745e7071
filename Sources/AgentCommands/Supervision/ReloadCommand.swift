import AgentBase
import AgentSupervision
import JSONSchema

/// `reload`: re-reads the settings and applies the differences.
package enum ReloadCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    /// What the reload did, by process name.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        /// Running as they were (the same pid).
        package var kept: [String]
        /// Changed: stopped and started again with their new settings.
        package var restarted: [String]
        /// New.
        package var started: [String]
        /// Gone from the settings (or disabled).
        package var stopped: [String]
        /// What the reload could not apply at once, in words.
        package var notes: [String]

        package init(kept: [String] = [], restarted: [String] = [], started: [String] = [], stopped: [String] = [], notes: [String] = []) {
            self.kept = kept
            self.restarted = restarted
            self.started = started
            self.stopped = stopped
            self.notes = notes
        }

        /// The schema's members (`settings_change` answers them too).
        static let properties: JSONObject = [
            "kept": ConfigurationCommands.names, "restarted": ConfigurationCommands.names, "started": ConfigurationCommands.names,
            "stopped": ["type": "array", "items": ["type": "string"],
                        "description": "Processes removed or disabled: asked to stop at once (SIGTERM); each may take up to its stop_timeout to end (status shows it stopping until then)."],
            "notes": ["type": "array", "items": ["type": "string"]],
        ]
    }

    package static let name = "reload"
    package static let summary = "Re-reads the settings and applies only the differences: the answer says what was kept, restarted, started and stopped."
    package static let routes: [CommandRoute] = [.post("/api/reload")]
    package static let mutating = true
    package static let answerSchema: JSONValue = {
        var properties = Answer.properties
        properties["ok"] = ["const": true]
        return CommandSchema.object(properties, required: ["ok", "kept", "restarted", "started", "stopped", "notes"], open: true)
    }()
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(kept: ["fetcher"], started: ["station"]))]
    }

    /// A reload while the agent stops.
    package static let stopping = CommandError(.failed, "the agent is stopping")

    /// A reload refused for the settings' problems, nothing applied: `invalid`, each problem
    /// listed as `settings_change` and `validate` list them (`file`, `pointer`, `message`).
    package static func refused(_ issues: [SettingsIssue]) -> CommandError {
        var errors: [JSONValue] = issues.prefix(mostErrorsShown).map {
            ["file": .string($0.file), "pointer": .string($0.pointer), "message": .string($0.message)]
        }
        if let more = more(issues.count) { errors.append(["message": .string(more)]) }
        let lines = shownErrors(issues.map(\.description))
        return CommandError(.invalid, lines.isEmpty ? "the settings are not valid" : lines.joined(separator: "\n"), errors: errors)
    }

    /// A reload that could not read or check the settings (`reason`, which names the file),
    /// nothing applied.
    package static func failed(_ reason: String) -> CommandError { CommandError(.failed, reason) }

    /// The most errors a refused reload lists (in its answer and its log line): a file of
    /// 240,000 bad processes made an answer of 119 MB and a log that rotated every earlier
    /// line away. `validate-settings` lists them all.
    package static let mostErrorsShown = 200

    /// `errors`, the first ``mostErrorsShown`` and a line saying how many more there are.
    package static func shownErrors(_ errors: [String]) -> [String] {
        guard let more = more(errors.count) else { return errors }
        return Array(errors.prefix(mostErrorsShown)) + [more]
    }

    /// The line that says how many errors are not listed, nil when all are.
    private static func more(_ count: Int) -> String? {
        count > mostErrorsShown ? "… and \(count - mostErrorsShown) more errors: `validate-settings` lists them all" : nil
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        host.reloadSettings(respond: respond)
    }
}
