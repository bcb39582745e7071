import AgentTestSupport
import Foundation
import Testing

/// `GET /api/processes/{name}/logs`: the `logs` command over HTTP, against a real agent.
@Suite(.ownThreads) struct HTTPProcessLogTests {
    @Test func aProcessLogIsReadOverHTTPAndAnUnknownProcessIsNotFound() throws {
        let agent = try APIAgent(http: HTTPAuthenticationTests.tokens)
        #expect(agent.run.waitForLine(onStderr: true) { $0.contains("[trades] ready in") } != nil, "\(agent.run.transcript)")
        let read = APIAgent.bearer(APIAgent.readToken)

        let answer = try agent.request("GET", "/api/processes/trades/logs?lines=1", headers: read)
        #expect(answer.status == 200, "\(answer.description)")
        let lines = answer.json?["lines"] as? [[String: Any]] ?? []
        #expect(lines.count == 1, "\(answer.description)")
        #expect(lines.first?["stream"] as? String == "supervisor", "\(answer.description)")
        let next = try #require(answer.json?["next"] as? Int)

        // Following: nothing new after `next` until the process is restarted.
        let after = try agent.request("GET", "/api/processes/trades/logs?after=\(next)&since=3600", headers: read)
        #expect(after.status == 200 && (after.json?["lines"] as? [Any])?.isEmpty == true, "\(after.description)")
        let restart = try agent.request("POST", "/api/processes/trades/restart", headers: APIAgent.bearer(APIAgent.adminToken))
        #expect(restart.status == 200, "\(restart.description)")
        let later = try agent.request("GET", "/api/processes/trades/logs?after=\(next)", headers: read)
        #expect((later.json?["lines"] as? [[String: Any]])?.contains { ($0["text"] as? String)?.contains("restart requested") == true } == true, "\(later.description)")

        let unknown = try agent.request("GET", "/api/processes/trade/logs", headers: read)
        #expect(unknown.status == 404, "\(unknown.description)")
        #expect(unknown.json?["code"] as? String == "not_found")
        #expect((unknown.json?["error"] as? String)?.contains(#"did you mean "trades"?"#) == true, "\(unknown.description)")

        for query in ["lines=-1", "after=x", "since=yesterday", "tail=3"] {
            let invalid = try agent.request("GET", "/api/processes/trades/logs?\(query)", headers: read)
            #expect(invalid.status == 400, "\(query): \(invalid.description)")
            #expect(invalid.json?["code"] as? String == "invalid", "\(query): \(invalid.description)")
        }
    }
}
