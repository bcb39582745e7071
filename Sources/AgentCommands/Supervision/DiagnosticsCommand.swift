import AgentBase
import AgentSupervision
import AgentWork
import JSONSchema

/// `diagnostics`: what an operator asks first when something is wrong.
package enum DiagnosticsCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    package static let name = "diagnostics"
    package static let summary = "Versions, paths (settings, run folder, socket, log, store), the store's figures, the fork server, outputs, task notifications and limits."
    package static let routes: [CommandRoute] = [.get("/api/diagnostics")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "versions": ["type": "object"], "agent": ["type": "object"], "paths": ["type": "object"],
        "store": ["type": "object"], "fork_server": ["type": "object"], "outputs": ["type": "array"], "limits": ["type": "object"],
        "notifications": NotificationStatistics.schema, "assignment": CommandCatalog.assignmentStatisticsSchema,
    ], required: ["ok", "versions", "paths", "limits"])
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "versions": ["agent": "1.0"], "paths": ["settings": "agent.json"], "limits": ["request_bytes": 1_048_576]]))]
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        respond(.success(host.diagnostics()))
    }
}
