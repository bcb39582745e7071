import AgentTestSupport
import Foundation
import Testing

/// `?follow` as server-sent events against the real agent: new events as they are stored,
/// `id:` lines that `Last-Event-ID` resumes from, a bounded number of streams, and streams
/// that end with their client or with the agent.
@Suite(.ownThreads, .serialized) struct EventStreamTests {
    static let trades = #"{"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.02}}"#

    @Test func followingEventsStreamsNewOnesWithIdsAndResumesAfterLastEventID() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        let stream = try EventStreamClient(port: agent.port, path: "/api/events?follow=1&limit=5&source=trades", headers: HTTPAgent.authorization)
        #expect(stream.status == 200)
        #expect(stream.headers["content-type"]?.hasPrefix("text/event-stream") == true, "\(stream.headers)")
        var ids: [Int] = []
        while ids.count < 30, let event = try stream.next() {
            let id = try #require(event.id, "an event without id: \(event.data)")
            #expect(event.json?["id"] as? Int == id)
            #expect(event.json?["source"] as? String == "trades")
            ids.append(id)
        }
        // More than the first page (5): these came as they were stored, in order, none twice.
        #expect(ids.count == 30)
        #expect(ids == ids.sorted() && Set(ids).count == ids.count, "\(ids)")

        // A reconnecting client resumes right after the last event it received.
        let last = ids[9]
        let resumed = try EventStreamClient(port: agent.port, path: "/api/events?follow=1&source=trades", headers: HTTPAgent.authorization.merging(["Last-Event-ID": "\(last)"]) { _, new in new })
        let first = try #require(try resumed.next())
        let expected = try agent.request("GET", "/api/events?source=trades&after=\(last)&limit=1").json?["events"] as? [[String: Any]]
        #expect(first.id == expected?.first?["id"] as? Int, "resumed at \(first.id ?? -1)")
        #expect(first.id == ids[10])
    }

    @Test func followIsRefusedWhereNothingCanBeFollowedAndWithAValueThatIsNotABoolean() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        let notFollowable = try agent.request("GET", "/api/status?follow=1")
        #expect(notFollowable.status == 400, "\(notFollowable)")
        #expect(notFollowable.json?["pointer"] as? String == "/follow")
        let badValue = try agent.request("GET", "/api/events?follow=maybe")
        #expect(badValue.status == 400, "\(badValue)")
        #expect(badValue.json?["pointer"] as? String == "/follow")
        let notFollowing = try agent.request("GET", "/api/events?follow=0&limit=1")
        #expect(notFollowing.status == 200)
        #expect(notFollowing.json?["events"] is [Any])
    }

    @Test func streamsAreBoundedAndAPlaceFreesWhenItsClientGoesAway() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        var streams: [EventStreamClient] = []
        for _ in 0..<32 {
            let stream = try EventStreamClient(port: agent.port, path: "/api/events?follow=1&limit=1", headers: HTTPAgent.authorization)
            #expect(stream.status == 200)
            streams.append(stream)
        }
        let refused = try EventStreamClient(port: agent.port, path: "/api/events?follow=1", headers: HTTPAgent.authorization)
        #expect(refused.status == 503)
        let body = try refused.remainingBody()
        #expect(body.contains("32 streams are open"), "\(body)")
        // Other requests are still served.
        #expect(try agent.request("GET", "/api/status").status == 200)

        // The clients go away without a word; their streams notice and end.
        streams.removeAll()
        #expect(HTTPAgent.eventually {
            guard let stream = try? EventStreamClient(port: agent.port, path: "/api/events?follow=1&limit=1", headers: HTTPAgent.authorization) else { return false }
            return stream.status == 200
        })
    }

    @Test func aStreamEndsWhenTheAgentStops() throws {
        let agent = try HTTPAgent(processes: Self.trades)
        let stream = try EventStreamClient(port: agent.port, path: "/api/events?follow=1&limit=1", headers: HTTPAgent.authorization)
        #expect(try stream.next() != nil)
        let stopped = agent.run.stop()
        #expect(stopped == 0)
        var last: EventStreamClient.Event?
        while let event = try stream.next() { last = event }
        #expect(last?.name == "end", "\(String(describing: last))")
        #expect(last?.json?["code"] as? String == "unavailable")
    }
}

/// `GET /api/processes/{name}/logs?follow=1`: a process's log as server-sent events.
@Suite(.ownThreads) struct ProcessLogStreamTests {
    @Test func followingAProcessLogStreamsTheLinesWrittenAfterItOpened() throws {
        let agent = try HTTPAgent(processes: EventStreamTests.trades)
        let stream = try EventStreamClient(port: agent.port, path: "/api/processes/trades/logs?follow=1&lines=1", headers: HTTPAgent.authorization)
        #expect(stream.status == 200)
        #expect(stream.headers["content-type"]?.hasPrefix("text/event-stream") == true, "\(stream.headers)")
        let first = try #require(try stream.next(), "the stream ended before its first line")
        let firstSeq = try #require(first.id, "a line without id: \(first.data)")

        // A restart writes supervisor lines about the process; they arrive on the open stream,
        // in order, each once.
        let restart = try agent.request("POST", "/api/processes/trades/restart", headers: HTTPAgent.authorization)
        #expect(restart.status == 200, "\(restart.body)")
        var seen: [Int] = [firstSeq]
        var texts: [String] = []
        while seen.count < 50, let line = try stream.next() {
            seen.append(try #require(line.id, "a line without id: \(line.data)"))
            let text = line.json?["text"] as? String ?? ""
            texts.append(text)
            if text.contains("restart requested") { break }
        }
        #expect(texts.contains { $0.contains("restart requested") }, "\(texts)")
        #expect(seen == seen.sorted() && Set(seen).count == seen.count, "\(seen)")
    }
}
