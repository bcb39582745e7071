import AgentTestSupport
import Foundation
import Testing

/// A reload puts the HTTP tokens and users in force at once, although the server keeps
/// listening as it started: a token removed or demoted by a reload, a user removed or demoted,
/// are refused or demoted from their next request, sessions included. Before, they kept working
/// until a restart, and the reload said only that `/http` "takes effect at the next start".
@Suite(.ownThreads) struct HTTPCredentialReloadTests {
    static func settings(_ http: String) -> String {
        """
        {"enabled_modules": ["sample"], "processes": {"trades": {"type": "trade_feed", "pairs": ["A/B"], "interval": 1}},
         "http": {"listen": "127.0.0.1:0", \(http)}}
        """
    }

    @Test func aReloadRevokesAndDemotesTokensUsersAndTheirSessionsAtOnce() throws {
        let hash = try APIAgent.hash(HTTPSession.password)
        let before = #""tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:AGENT_READ_TOKEN}", "role": "read", "name": "reader"}], "#
            + #""users": {"alice": {"password_hash": "\#(hash)"}, "bob": {"password_hash": "\#(hash)", "role": "read"}}"#
        let agent = try APIAgent(http: before)
        let admin = APIAgent.bearer(APIAgent.adminToken), reader = APIAgent.bearer(APIAgent.readToken)
        #expect(try agent.request("GET", "/api/session", headers: reader).status == 200)
        let (alice, aliceCSRF, _) = try HTTPSession.login(agent)
        let (bob, _, _) = try HTTPSession.login(agent, user: "bob")
        #expect(try agent.request("GET", "/api/session", headers: ["Cookie": bob]).status == 200)
        // An event stream opened with the reader's token, before the reload.
        let port = try #require(Int(agent.base.split(separator: ":").last ?? ""))
        let stream = try RawHTTP(port: port, timeout: 60)
        try stream.send("GET /api/events?follow=1 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(APIAgent.readToken)\r\nConnection: close\r\n\r\n")

        // The admin token becomes a read token, the reader's token and bob are removed, alice is demoted.
        let after = #""tokens": [{"token": "${env:AGENT_API_TOKEN}", "role": "read", "name": "ops"}], "users": {"alice": {"password_hash": "\#(hash)", "role": "read"}}"#
        try Self.settings(after).write(toFile: agent.run.settingsFile, atomically: true, encoding: .utf8)
        let reload = try agent.request("POST", "/api/reload", headers: admin)
        #expect(reload.status == 200, "\(reload.description)")
        #expect(!reload.body.contains("/http changed"), "tokens and users alone need no restart: \(reload.body)")

        let revoked = try agent.request("GET", "/api/session", headers: reader)
        #expect(revoked.status == 401, "a removed token still works: \(revoked.description)")
        let stop = try agent.request("POST", "/api/processes/trades/stop", headers: admin)
        #expect(stop.status == 403, "a token demoted to read still stops processes: \(stop.description)")
        let demoted = try agent.request("GET", "/api/session", headers: admin)
        #expect(demoted.json?["role"] as? String == "read" && demoted.json?["user"] as? String == "ops", "\(demoted.description)")

        let aliceNow = try agent.request("GET", "/api/session", headers: ["Cookie": alice])
        #expect(aliceNow.json?["role"] as? String == "read", "a demoted user's session keeps its role: \(aliceNow.description)")
        let aliceStop = try agent.request("POST", "/api/processes/trades/stop",
                                          headers: ["Cookie": alice, "Origin": agent.base, "Sec-Fetch-Site": "same-origin", "X-CSRF-Token": aliceCSRF])
        #expect(aliceStop.status == 403, "\(aliceStop.description)")
        let bobNow = try agent.request("GET", "/api/session", headers: ["Cookie": bob])
        #expect(bobNow.status == 401, "a removed user's session goes on: \(bobNow.description)")
        let bobAgain = try agent.request("POST", "/api/login", headers: HTTPSession.json, body: #"{"user": "bob", "password": "\#(HTTPSession.password)"}"#)
        #expect(bobAgain.status == 401, "a removed user logs in: \(bobAgain.description)")
        // The stream opened with the revoked token ends, saying why (it went on sending events).
        let streamed = String(decoding: stream.receiveUntilClosed(), as: UTF8.self)
        #expect(streamed.contains("event: end") && streamed.contains("no longer in force"), "\(streamed.suffix(400))")
        let status = try agent.request("GET", "/api/status", headers: admin)
        #expect(status.status == 200 && !status.body.contains(#""state":"stopped""#), "\(status.description)")
    }
}
