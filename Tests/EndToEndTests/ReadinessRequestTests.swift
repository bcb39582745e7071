import AgentTestSupport
import Foundation
import Testing

/// `readiness` over the control socket checks its rules against the command's request schema,
/// as the HTTP route does: `failures` of -1 or a `window` of 1e400 was taken before.
@Suite(.ownThreads) struct ReadinessRequestTests {
    @Test func rulesOutsideTheSchemaAreRefusedWithTheirPointerOnTheControlSocket() throws {
        let agent = try AgentRun(settings: #"""
            {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 1}}}
            """#, arguments: ["--no-build", "--quiet"])
        defer { _ = agent.stop() }
        let socket = agent.directory + "/.agent/run/control.sock"
        let deadline = Date().addingTimeInterval(60)
        var ready: [String: Any]?
        repeat {
            ready = RawControlClient.request(socket, #"{"command": "readiness"}"#)
            if ready == nil { Thread.sleep(forTimeInterval: 0.05) }
        } while ready == nil && Date() < deadline
        #expect(ready?["ok"] as? Bool == true, "\(agent.transcript)")

        for (request, pointer) in [(#"{"command": "readiness", "failures": -1}"#, "/failures"),
                                   (#"{"command": "readiness", "window": 1e400}"#, "/window"),
                                   (#"{"command": "readiness", "window": 0}"#, "/window"),
                                   (#"{"command": "readiness", "failure": 3}"#, "/failure")] {
            let answer = try #require(RawControlClient.request(socket, request), "\(request)")
            #expect(answer["ok"] as? Bool == false, "\(request): \(answer)")
            #expect(answer["code"] as? String == "invalid", "\(request): \(answer)")
            #expect(answer["pointer"] as? String == pointer, "\(request): \(answer)")
            #expect((answer["error"] as? String)?.hasPrefix(pointer + ": ") == true, "\(request): \(answer)")
        }
        let valid = try #require(RawControlClient.request(socket, #"{"command": "readiness", "failures": 100, "window": 86400}"#))
        #expect(valid["ok"] as? Bool == true, "\(valid)")
        #expect(valid["window"] as? Int == 86400, "\(valid)")
    }
}
