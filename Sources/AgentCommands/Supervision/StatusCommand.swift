import AgentBase
import AgentSupervision
import AgentWork
import JSONSchema

/// `status`: the agent and every process (answered from a snapshot; the HTTP front batches it, see ``SnapshotBatcher``).
package enum StatusCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost

    package static let name = "status"
    package static let summary = "The agent and every process: state, pid, restarts, events, queue; the store, outputs and fork server."
    package static let routes: [CommandRoute] = [.get("/api/status")]
    package static let mutating = false
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "pid": ["type": "integer"], "uptime": ["type": "number"], "stopping": ["type": "boolean"],
        "fronts_starting": ["const": true, "description": "Present while the HTTP server is still starting (one that cannot listen stops the agent)."],
        "processes": ["type": "array", "items": SupervisionCommands.processSchema],
        "store": ["type": "object"], "outputs": ["type": "array"], "fork_server": ["type": "object"],
        "loop": CommandSchema.object(["longest_turn": ["type": "number", "minimum": 0], "slow_turns": ["type": "integer", "minimum": 0]],
                                          required: ["longest_turn", "slow_turns"]),
        "notifications": NotificationStatistics.schema, "assignment": CommandCatalog.assignmentStatisticsSchema,
    ], required: ["ok", "processes"], open: true)
    package static var examples: [(request: JSONValue, answer: EncodedAnswer)] {
        [([:], EncodedAnswer(["ok": true, "pid": 4200, "uptime": 12.5, "processes": [SupervisionCommands.exampleProcess]]))]
    }

    package static func run(_ request: NoFields, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<EncodedAnswer, CommandError>) -> Void) {
        respond(.success(EncodedAnswer(host.takeSnapshot().statusAnswer)))
    }
}
