import AgentCommands
import Hummingbird
import JSONSchema

/// `GET /livez`: the supervisor's loop answers (no credentials needed). `GET /readyz`: the
/// `readiness` command with the settings' rules (`http.readiness`): 200 when ready, 503 with
/// the reasons otherwise.
struct HealthRoutes: Sendable {
    let commands: CommandCenter
    let readiness: Readiness

    static let documentation: [RouteDescription] = [
        RouteDescription("GET", "/livez", operationID: "livez", summary: "Whether the supervisor's loop answers (within 2 s). Needs no credentials.", tag: "health",
                         isPublic: true,
                         answers: [.json("200", "The loop answered.", CommandDescription.okAnswer),
                                   .error("503", "The loop did not answer within 2 s.")]),
        RouteDescription("GET", "/readyz", operationID: "readyz", summary: "Whether the store is writable and every enabled process running or restarting without flapping (http.readiness); in a fleet, the fleet's state beside (a fleet degraded is not unready).", tag: "health",
                         answers: [.json("200", "Ready.", readyzAnswer), .json("503", "Not ready: the reasons.", readyzAnswer)]),
        RouteDescription("GET", "/metrics", operationID: "metrics_prometheus", summary: "The metrics command in the Prometheus text format (0.0.4), with the HTTP request counters.", tag: "health",
                         answers: [.init("200", "The exposition.", content: [("text/plain", ["type": "string"])])]),
    ]

    /// What the health listener (`"health_listen"`) answers.
    static let probePaths: Set<String> = ["/livez", "/readyz"]

    static let readyzAnswer: JSONValue = CommandDescription.object([
        "ok": ["type": "boolean"], "reasons": ["type": "array", "items": ["type": "string"]],
        "fleet": ["type": "string", "description": "In a fleet: `joined`, or `degraded: WHY`; not a reason to be unready."],
    ], required: ["ok", "reasons"])

    func register(on router: Router<AgentRequestContext>) {
        router.get("/livez") { _, _ in
            if await commands.loopAnswers(within: 2) {
                return APIResponse.json(["ok": true])
            }
            return APIResponse.error(.serviceUnavailable, code: "unavailable", "the supervisor's loop did not answer within 2 s")
        }
        router.get("/readyz") { _, context in
            let caller = CommandCenter.Caller(front: "http", user: context.identity?.name, address: context.remoteAddress)
            let answer = await commands.execute(
                ["command": "readiness", "failures": .number(JSONNumber(readiness.failures)), "window": .number(JSONNumber(readiness.window))],
                caller: caller)
            guard answer["ok"]?.boolValue == true else {
                let reason = answer["error"]?.stringValue ?? "the readiness command failed"
                return APIResponse.json(["ok": false, "reasons": [.string("agent: \(reason)")]], status: .serviceUnavailable)
            }
            let ready = answer["ready"]?.boolValue == true
            var body: JSONObject = ["ok": .bool(ready), "reasons": answer["reasons"] ?? []]
            // A fleet degraded is said, never unready: local work goes on without it.
            if let fleet = answer["fleet"] { body["fleet"] = fleet }
            return APIResponse.json(.object(body), status: ready ? .ok : .serviceUnavailable)
        }
    }
}
