import AgentRuntime
import Hummingbird
import JSONSchema

/// `GET /livez`: the supervisor's loop answers (no credentials needed). `GET /readyz` is
/// added with the readiness rules.
struct HealthRoutes: Sendable {
    let commands: CommandCenter

    static let documentation: [RouteDescription] = [
        RouteDescription("GET", "/livez", operationID: "livez", summary: "Whether the supervisor's loop answers (within 2 s). Needs no credentials.", tag: "health",
                         isPublic: true,
                         answers: [.json("200", "The loop answered.", CommandDescription.okAnswer),
                                   .error("503", "The loop did not answer within 2 s.")]),
    ]

    func register(on router: Router<AgentRequestContext>) {
        router.get("/livez") { _, _ in
            if await commands.loopAnswers(within: 2) {
                return APIResponse.json(["ok": true])
            }
            return APIResponse.error(.serviceUnavailable, code: "unavailable", "the supervisor's loop did not answer within 2 s")
        }
    }
}
