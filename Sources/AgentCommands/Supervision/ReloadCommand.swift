import AgentBase
import AgentSupervision
import JSONSchema

/// `reload`: re-reads the settings and applies the differences.
package enum ReloadCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    package static let name = "reload"
    package static let summary = "Re-reads the settings and applies only the differences: the answer says what was kept, restarted, started and stopped."
    package static let routes: [CommandRoute] = [.post("/api/reload")]
    package static let mutating = true
    package static let answerSchema: JSONValue = CommandSchema.object(["ok": ["const": true]], required: ["ok"], open: true)
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "kept": ["fetcher"], "restarted": [], "started": [], "stopped": []]))]
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        host.reloadSettings(respond: respond)
    }
}
