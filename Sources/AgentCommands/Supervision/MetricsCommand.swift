import AgentBase
import AgentSupervision
import JSONSchema

/// `metrics`: the agent's metrics, answered from a snapshot like `status`.
package enum MetricsCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    package static let name = "metrics"
    package static let summary = "The agent's metrics as families named the Prometheus way (GET /metrics gives them in the Prometheus text format)."
    package static let routes: [CommandRoute] = [.get("/api/metrics")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true],
        "families": ["type": "array", "items": CommandSchema.object([
            "name": ["type": "string", "pattern": "^agent_[a-z0-9_]+$"], "type": ["enum": ["counter", "gauge"]], "help": ["type": "string"],
            "samples": ["type": "array", "items": CommandSchema.object([
                "labels": ["type": "object", "additionalProperties": ["type": "string"]], "value": ["type": "number"],
            ], required: ["labels", "value"])],
        ], required: ["name", "type", "help", "samples"])],
    ], required: ["ok", "families"])
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "families": [["name": "agent_processes", "type": "gauge", "help": "Processes.",
                                                        "samples": [["labels": ["state": "running"], "value": 1]]]]]))]
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        respond(.success(EncodedAnswer(host.takeSnapshot().metricsAnswer)))
    }
}
