import AgentTestSupport
import Foundation
import Testing

/// Slow and greedy clients against the real HTTP front (slowloris): a request head must arrive
/// within `header_timeout`, one client address holds at most `max_connections_per_client`
/// connections, and the health listener answers probes while the API's connections are all
/// taken — so that a liveness probe never restarts a healthy agent.
@Suite(.ownThreads, .serialized) struct HTTPSlowClientTests {
    static let trades = HTTPBadInputTests.trades
    /// A head that never ends.
    static let halfHead = "GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: "

    /// `count` connections from `source`, each with half a head sent.
    static func halfSent(_ count: Int, port: Int, from source: String) throws -> [RawHTTP] {
        try (0..<count).map { _ in
            let client = try RawHTTP(port: port, from: source, timeout: 60)
            try client.send(halfHead)
            return client
        }
    }

    /// With the default `header_timeout` (5 s) and an `idle_timeout` of 10 minutes: before, a
    /// half-sent head held its connection for the whole idle timeout.
    @Test func aHalfSentRequestHeadGets408AndIsClosedAfterTheHeaderDeadline() throws {
        let agent = try HTTPAgent(processes: Self.trades, http: #""idle_timeout": 600"#)
        let fresh = try RawHTTP(port: agent.port)
        try fresh.send(Self.halfHead)
        let silent = try RawHTTP(port: agent.port)
        // A kept-alive connection: one request answered, then half of the next.
        let keptAlive = try RawHTTP(port: agent.port)
        try keptAlive.send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try keptAlive.receiveReply().status == 200)
        try keptAlive.send(Self.halfHead)
        // A whole request and the start of the next in one write.
        let pipelined = try RawHTTP(port: agent.port)
        try pipelined.send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n" + Self.halfHead)
        // A kept-alive connection that is only idle: idle_timeout's, not the head deadline's.
        let idle = try RawHTTP(port: agent.port)
        try idle.send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try idle.receiveReply().status == 200)

        for (name, client) in [("fresh", fresh), ("kept alive", keptAlive)] {
            let reply = try RawHTTP.parse(client.receiveUntilClosed())
            #expect(reply.status == 408, "\(name): \(reply)")
            #expect(reply.json?["code"] as? String == "timeout", "\(name): \(reply)")
            #expect((reply.json?["error"] as? String)?.contains("within 5 s (http.header_timeout)") == true, "\(name): \(reply)")
        }
        let both = String(decoding: pipelined.receiveUntilClosed(), as: UTF8.self)
        #expect(both.hasPrefix("HTTP/1.1 200") && both.contains("HTTP/1.1 408"), "\(both.debugDescription)")
        // Nothing was sent: nothing to answer, the connection is just closed.
        #expect(silent.receiveUntilClosed().isEmpty)
        #expect(idle.isOpenAndQuiet())
        try idle.send("GET /livez HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(try idle.receiveReply().status == 200)
        #expect(try agent.request("GET", "/api/status").status == 200)
        #expect(agent.run.stop() == 0)
    }

    /// A body sent a byte at a time: before, one byte within each `idle_timeout` kept the
    /// connection for as long as the client went on, and 300 such connections from five
    /// loopback addresses held every slot of the API (no token needed: `POST /api/login`).
    /// Now the body has `body_timeout` plus a second per 4 KiB; a body that does keep coming
    /// at a few KiB a second is read to its end.
    @Test func aBodyThatDoesNotKeepComingGets408AndIsClosedAfterTheBodyDeadline() throws {
        let agent = try HTTPAgent(processes: Self.trades, http: #""idle_timeout": 600, "body_timeout": 2"#)
        let slow = try RawHTTP(port: agent.port, timeout: 60)
        try slow.send("POST /api/login HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{")
        // A body of 40 KiB in 4 KiB pieces, one every 0.25 s: longer than the deadline alone, within its share per byte.
        let (opening, closing) = (#"{"type": "steady", "payload": ""#, #""}"#)
        let steady = try RawHTTP(port: agent.port, timeout: 60)
        try steady.send("POST /api/events HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(HTTPAgent.token)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(opening.utf8.count + 10 * 4096 + closing.utf8.count)\r\n\r\n" + opening)
        // Meanwhile a byte every 0.25 s on the slow one: never silent for idle_timeout (600 s),
        // for 30 s at most: it is closed within that, or the deadline did not hold.
        var (sentToSlow, pieces) = (0, 0)
        func sendPiece() throws {
            guard pieces <= 10 else { return }
            try steady.send(pieces < 10 ? String(repeating: "x", count: 4096) : closing)
            pieces += 1
        }
        for _ in 0..<120 {
            try sendPiece()
            guard slow.isOpenAndQuiet() else { break }
            try slow.send(" ")
            sentToSlow += 1
            Thread.sleep(forTimeInterval: 0.25)
        }
        while pieces <= 10 { try sendPiece() }
        let read = try steady.receiveReply()
        #expect(read.status == 200, "the steady body was not read to its end: \(read)")
        #expect(!slow.isOpenAndQuiet(), "the slow body held its connection for 30 s")
        #expect(sentToSlow < 120)
        // The 408, unless the close's reset (a byte sent meanwhile, unread) overtook it.
        let reply = slow.receiveUntilClosed()
        if !reply.isEmpty {
            let parsed = try RawHTTP.parse(reply)
            #expect(parsed.status == 408 && (parsed.json?["error"] as? String)?.contains("(http.body_timeout)") == true, "\(parsed)")
        }
        #expect(try agent.request("GET", "/api/status").status == 200)
        #expect(agent.run.stop() == 0)
    }

    /// 30 half-sent heads from one address with 24 connections in all: before, they took all
    /// 24 for the idle timeout and every other client waited in the backlog.
    @Test func aClientOverItsConnectionBoundIsRefusedWhileOtherClientsAreServed() throws {
        let agent = try HTTPAgent(processes: Self.trades, http: #""idle_timeout": 600, "header_timeout": 300, "max_connections": 24, "max_connections_per_client": 8"#)
        let greedy = try Self.halfSent(30, port: agent.port, from: "127.0.0.1")
        #expect(HTTPAgent.eventually { greedy.filter { !$0.isOpenAndQuiet() }.count >= 22 })
        let refused = greedy.filter { !$0.isOpenAndQuiet() }
        #expect(refused.count == 22, "\(refused.count) of 30 were refused")
        for client in refused {
            let reply = try RawHTTP.parse(client.receiveUntilClosed())
            #expect(reply.status == 429, "\(reply)")
            #expect(reply.headers["retry-after"] != nil, "\(reply)")
            #expect((reply.json?["error"] as? String)?.contains("127.0.0.1 has 8 connections open, the most one client may (http.max_connections_per_client)") == true, "\(reply)")
        }
        // Another client is served at once.
        let other = try RawHTTP(port: agent.port, from: "127.0.0.2")
        try other.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(HTTPAgent.token)\r\nConnection: close\r\n\r\n")
        #expect(try RawHTTP.parse(other.receiveAll()).status == 200)
        #expect(greedy.filter { $0.isOpenAndQuiet() }.count == 8)
        #expect(agent.run.stop() == 0)
    }

    /// The brief's attack: half-sent heads from one address beyond its bound, and from others
    /// up to max_connections, with more waiting in the backlog.
    @Test func probesAreAnsweredOnTheHealthListenerWhileTheAPIsConnectionsAreAllHeld() throws {
        let agent = try HTTPAgent(processes: Self.trades, http: #""idle_timeout": 600, "header_timeout": 10, "max_connections": 8, "max_connections_per_client": 4, "health_listen": "127.0.0.1:0""#)
        let marker = "http: health checks (GET /livez, GET /readyz) listening on http://127.0.0.1:"
        let line = try #require(agent.run.waitForLine(onStderr: true) { $0.contains(marker) }, "\(agent.run.transcript)")
        let healthPort = try #require(line.components(separatedBy: marker).last.flatMap { Int($0.prefix { $0.isNumber }) })
        #expect(HTTPAgent.eventually { (try? agent.statusField("trades", "state")) as? String == "running" })

        var held: [RawHTTP] = []
        for source in ["127.0.0.1", "127.0.0.2", "127.0.0.3"] { held += try Self.halfSent(6, port: agent.port, from: source) }
        // (a) The probes answer, whatever the API's listener holds.
        let livez = try RawHTTP.request(port: healthPort, "GET", "/livez")
        #expect(livez.status == 200, "\(livez)")
        let readyz = try RawHTTP.request(port: healthPort, "GET", "/readyz", headers: HTTPAgent.authorization)
        #expect(readyz.status == 200, "\(readyz)")
        let api = try RawHTTP.request(port: healthPort, "GET", "/api/status", headers: HTTPAgent.authorization)
        #expect(api.status == 404, "\(api)")
        #expect((api.json?["error"] as? String)?.contains("answers only GET /livez and GET /readyz") == true, "\(api)")
        // (c) Every half-sent head is closed: by the per-client bound, or with 408 at the deadline.
        for client in held {
            let reply = try RawHTTP.parse(client.receiveUntilClosed())
            #expect([408, 429].contains(reply.status), "\(reply)")
        }
        // (b) Then a well-behaved client is served.
        let other = try RawHTTP(port: agent.port, from: "127.0.0.4")
        try other.send("GET /api/status HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer \(HTTPAgent.token)\r\nConnection: close\r\n\r\n")
        #expect(try RawHTTP.parse(other.receiveAll()).status == 200)
        #expect(agent.run.stop() == 0)
    }
}
