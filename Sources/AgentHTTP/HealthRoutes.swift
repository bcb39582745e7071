import AgentRuntime
import Hummingbird
import JSONSchema

/// `GET /livez`: the supervisor's loop answers (no credentials needed). `GET /readyz` is
/// added with the readiness rules.
struct HealthRoutes: Sendable {
    let commands: CommandCenter

    func register(on router: Router<AgentRequestContext>) {
        router.get("/livez") { _, _ in
            if await commands.loopAnswers(within: 2) {
                return APIResponse.json(["ok": true])
            }
            return APIResponse.error(.serviceUnavailable, code: "unavailable", "the supervisor's loop did not answer within 2 s")
        }
    }
}
