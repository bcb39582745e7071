import AgentTestSupport
import Foundation
import Testing

/// What the HTTP front answers where it used to answer wrongly: HEAD on a GET route (405
/// before) and `?follow=1` with a parameter the command refuses (a 200 stream that ended at
/// once before).
@Suite(.ownThreads) struct HeadAndFollowAnswerTests {
    static let trades = #"{"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 1}}"#

    @Test func headOnAGetRouteAnswersTheGetsStatusAndHeadersWithoutABody() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        for path in ["/api/openapi.json", "/livez", "/api/status", "/api/processes/trades/logs", "/"] {
            let get = try agent.request("GET", path)
            let head = try agent.request("HEAD", path)
            #expect(head.status == get.status, "\(path): \(head)")
            #expect(head.status == 200, "\(path): \(head)")
            #expect(head.body.isEmpty, "\(path): \(head)")
            #expect(head.headers["content-type"] == get.headers["content-type"], "\(path): \(head)")
        }
        // A document that does not change: the same length as the GET's body.
        let document = try agent.request("GET", "/api/openapi.json")
        let documentHead = try agent.request("HEAD", "/api/openapi.json")
        #expect(documentHead.headers["content-length"] == String(document.body.utf8.count), "\(documentHead)")
        // Credentials are checked as for the GET.
        let anonymous = try RawHTTP.request(port: agent.port, "HEAD", "/api/status")
        #expect(anonymous.status == 401, "\(anonymous)")
        #expect(anonymous.body.isEmpty)
    }

    @Test func followWithAValueTheCommandRefusesAnswersItsErrorAndStatusNotAStream() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        let badSince = try agent.request("GET", "/api/events?follow=1&since=yesterday")
        #expect(badSince.status == 400, "\(badSince)")
        #expect(badSince.headers["content-type"]?.hasPrefix("application/json") == true, "\(badSince)")
        #expect(badSince.json?["pointer"] as? String == "/since", "\(badSince)")
        let unknownProcess = try agent.request("GET", "/api/processes/nobody/logs?follow=1")
        #expect(unknownProcess.status == 404, "\(unknownProcess)")
        #expect(unknownProcess.json?["code"] as? String == "not_found", "\(unknownProcess)")
    }
}
