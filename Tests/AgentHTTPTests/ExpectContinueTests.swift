import AgentTestSupport
import Foundation
import Testing

/// `Expect: 100-continue` against a real agent: the client is asked for its body at once, a
/// body announced over `http.max_body_bytes` is refused before it is sent, and an HTTP/1.0
/// request's expectation is ignored. curl sends it above 1 MiB and, unanswered, waited 1 s.
@Suite(.ownThreads) struct ExpectContinueTests {
    static func agent() throws -> HTTPAgent {
        try HTTPAgent(modules: [], http: #""max_body_bytes": 2097152"#, settings: """
        "tasks": {"t": {"type": "command", "command": ["/bin/true"]}}
        """)
    }

    static func head(_ version: String, length: Int) -> String {
        "POST /api/tasks/t/run HTTP/\(version)\r\nHost: x\r\nAuthorization: Bearer \(HTTPAgent.token)\r\nConnection: close\r\n"
            + "Content-Type: application/json\r\nContent-Length: \(length)\r\nExpect: 100-continue\r\n\r\n"
    }

    @Test func aClientExpectingContinueIsAskedForItsBodyBeforeItSendsIt() throws {
        let agent = try Self.agent()
        let body = #"{"input": {"n": 1}}"#
        let client = try RawHTTP(port: agent.port, timeout: 60)
        try client.send(Self.head("1.1", length: body.utf8.count))
        // Nothing of the body is sent until the server asks: without the interim answer this
        // read waits for the socket's timeout and fails.
        var interim = Data()
        while !String(decoding: interim, as: UTF8.self).contains("\r\n\r\n") {
            let piece = try client.receive()
            #expect(!piece.isEmpty, "the connection closed before an answer")
            if piece.isEmpty { return }
            interim += piece
        }
        #expect(String(decoding: interim, as: UTF8.self).hasPrefix("HTTP/1.1 100 Continue\r\n"), "\(String(decoding: interim, as: UTF8.self))")
        try client.send(body)
        let reply = try RawHTTP.parse(client.receiveAll())
        #expect(reply.status == 200, "\(reply)")

        // curl sends the expectation for a body over 1 MiB; it gets the interim answer, then its run.
        let file = TestPaths.temporaryDirectory("expect") + "/body.json"
        try FileManager.default.createDirectory(atPath: (file as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: (file as NSString).deletingLastPathComponent) }
        // Over 1 MiB in all, its input under the run's bound of 1 MiB: the rest is whitespace.
        try Data((#"{"input": {"n": 3}}"# + String(repeating: " ", count: 1_100_000)).utf8).write(to: URL(fileURLWithPath: file))
        let curl = try runProgram("/usr/bin/curl", ["-sS", "-i", "--max-time", "60", "-H", "Authorization: Bearer \(HTTPAgent.token)",
                                                    "-H", "Content-Type: application/json", "--data-binary", "@" + file,
                                                    "http://127.0.0.1:\(agent.port)/api/tasks/t/run"], timeout: 90)
        #expect(curl.stdout.hasPrefix("HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK"), "\(curl.stdout.prefix(300))\(curl.stderr)")
    }

    @Test func aBodyAnnouncedOverTheLimitIsRefusedBeforeItIsSent() throws {
        let agent = try Self.agent()
        let client = try RawHTTP(port: agent.port, timeout: 60)
        try client.send(Self.head("1.1", length: 5_000_000))
        let reply = try RawHTTP.parse(client.receiveUntilClosed())
        #expect(reply.status == 413, "\(reply)")
        #expect(reply.body.contains(#""code":"too_large""#) && reply.body.contains("5000000 bytes, larger than 2097152 (http.max_body_bytes); it was not read"),
                "\(reply)")
        #expect(reply.headers["connection"] == "close", "\(reply)")
        // The agent serves the next client as before, and queued nothing.
        let runs = try agent.request("GET", "/api/runs?task=t")
        #expect(runs.status == 200 && (runs.json?["runs"] as? [Any])?.isEmpty == true, "\(runs)")
    }

    @Test func anHTTP10RequestsExpectationIsIgnored() throws {
        let agent = try Self.agent()
        let body = #"{"input": {"n": 2}}"#
        let client = try RawHTTP(port: agent.port, timeout: 60)
        try client.send(Self.head("1.0", length: body.utf8.count) + body)
        let answer = String(decoding: try client.receiveAll(), as: UTF8.self)
        #expect(!answer.contains(" 100 Continue"), "\(answer)")
        #expect(try RawHTTP.parse(Data(answer.utf8)).status == 200, "\(answer)")
    }

    /// A request expecting 100 behind one still being answered on the same connection gets no
    /// interim answer: it would come before (or, in a chunked answer, inside) the earlier one.
    @Test func noInterimAnswerComesWhileAnEarlierRequestIsBeingAnswered() throws {
        let agent = try Self.agent()
        let first = #"{"input": {"n": 1}}"#, second = #"{"input": {"n": 2}}"#
        let client = try RawHTTP(port: agent.port, timeout: 60)
        // One write: the second head is read before the first request can be answered.
        try client.send("POST /api/tasks/t/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(HTTPAgent.token)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(first.utf8.count)\r\n\r\n" + first + Self.head("1.1", length: second.utf8.count) + second)
        let answers = String(decoding: try client.receiveAll(), as: UTF8.self)
        #expect(answers.hasPrefix("HTTP/1.1 200 OK\r\n"), "\(answers)")
        #expect(!answers.contains("100 Continue"), "\(answers)")
        #expect(answers.components(separatedBy: "HTTP/1.1 200 OK").count == 3, "both answered: \(answers)")
    }

    /// A length with the whitespace the HTTP parser takes around it is still read as a length.
    @Test func aLengthWithTrailingWhitespaceOverTheLimitIsRefusedBeforeItIsSent() throws {
        let agent = try Self.agent()
        let client = try RawHTTP(port: agent.port, timeout: 60)
        try client.send(Self.head("1.1", length: 5_000_000).replacingOccurrences(of: "Content-Length: 5000000\r\n", with: "Content-Length: 5000000 \r\n"))
        let reply = try RawHTTP.parse(client.receiveUntilClosed())
        #expect(reply.status == 413, "\(reply)")
    }
}
