import AgentBase
import AgentSupervision
import JSONSchema

/// `readiness`: whether the agent does what its settings ask (see ``Readiness``).
package enum ReadinessCommand: AgentCommand {
    package typealias Host = any SupervisionCommandHost
    /// The rules (absent: ``Readiness/defaultFailures`` in ``Readiness/defaultWindow``).
    package struct Request: Codable, Sendable, Equatable {
        package var failures: Int?
        package var window: Double?

        package init(failures: Int? = nil, window: Double? = nil) {
            self.failures = failures
            self.window = window
        }
    }

    /// Whether the agent is ready, why not, and the rules it was judged by.
    package struct Answer: Encodable, Sendable, Equatable {
        package let ok = true
        package var ready: Bool
        /// One per line: `fetcher: failed (…)`, `store: degraded: …`.
        package var reasons: [String]
        package var failures: Int
        package var window: Double
        /// In a fleet: `joined`, or `degraded: WHY` — said, never a reason to be unready (an
        /// agent's local work never needs the fleet's database).
        package var fleet: String?

        package init(ready: Bool, reasons: [String], failures: Int, window: Double, fleet: String? = nil) {
            self.ready = ready
            self.reasons = reasons
            self.failures = failures
            self.window = window
            self.fleet = fleet
        }
    }

    package static let name = "readiness"
    package static let summary = "Whether the store is writable and every enabled process running or restarting without flapping; the reasons when not (GET /readyz answers 503 then)."
    package static let routes: [CommandRoute] = [.get("/api/readiness")]
    package static let mutating = false
    package static let requestSchema = Readiness.requestSchema
    package static let answerSchema: JSONValue = CommandSchema.object([
        "ok": ["const": true], "ready": ["type": "boolean"],
        "reasons": ["type": "array", "items": ["type": "string"]],
        "failures": ["type": "integer"], "window": ["type": "number"],
        "fleet": ["type": "string", "description": "In a fleet: `joined`, or `degraded: WHY` (not joined yet, or its database away). Not a reason to be unready: local work goes on."],
    ], required: ["ok", "ready", "reasons", "failures", "window"])
    package static var examples: [(request: JSONValue, answer: Answer)] {
        [([:], Answer(ready: true, reasons: [], failures: 3, window: 60)),
         (["failures": 5, "window": 30], Answer(ready: false, reasons: ["fetcher: failed (exit 1)"], failures: 5, window: 30))]
    }

    package static func run(_ request: Request, on host: any SupervisionCommandHost, caller: CommandCaller,
                            respond: @escaping (Result<Answer, CommandError>) -> Void) {
        respond(.success(Readiness(request).answer(for: host.takeSnapshot())))
    }
}
