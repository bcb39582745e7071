import AgentTestSupport
import Foundation
import Testing

/// An event published from outside (POST /api/events, `agent-control publish`) names who
/// publishes; it may not pass for one of the agent's processes, whose subscribers and event
/// log would take it for the process's own (as it may not pass for the runtime).
@Suite(.ownThreads, .serialized) struct EventSourceTests {
    @Test func aPublishedEventMayNotPassForOneOfTheProcesses() throws {
        // `later` is in the settings but disabled: enabled, its events would be mixed with a forger's.
        let agent = try APIAgent(http: LanguageModelChatTests.tokens, processes: """
            {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 1}, "later": {"type": "trade_feed", "enabled": false}}
            """)
        let headers = APIAgent.bearer(APIAgent.adminToken).merging(["Content-Type": "application/json"]) { $1 }
        let forged = try agent.request("POST", "/api/events", headers: headers, body: #"{"type": "trade", "payload": {"pair": "A/B", "price": 1}, "source": "trades"}"#)
        #expect(forged.status == 400 && forged.json?["pointer"] as? String == "/source", "\(forged)")
        #expect((forged.json?["error"] as? String)?.contains("one of the agent's processes") == true, "\(forged)")
        let cli = try runProgram("agent-control", ["publish", "trade", "--source", "trades", "--settings", agent.run.settingsFile], timeout: 60)
        #expect(cli.status != 0 && cli.stderr.contains("one of the agent's processes"), "\(cli.stdout)\(cli.stderr)")
        let disabled = try agent.request("POST", "/api/events", headers: headers, body: #"{"type": "trade", "source": "later"}"#)
        #expect(disabled.status == 400 && disabled.json?["pointer"] as? String == "/source", "a disabled process's name: \(disabled)")
        // Another source is taken.
        let shop = try agent.request("POST", "/api/events", headers: headers, body: #"{"type": "trade", "source": "shop"}"#)
        #expect(shop.status == 200, "\(shop)")
    }
}
