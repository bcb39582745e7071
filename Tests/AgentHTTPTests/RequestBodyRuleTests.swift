import AgentTestSupport
import Foundation
import Testing

/// The one rule by which the HTTP front reads a body, on a real agent with the real curl: JSON
/// with no Content-Type, `application/json` or a `+json` type in UTF-8, or sent with curl
/// `-d`'s default form type; an HTML form's fields; 415 for anything else, saying what was
/// expected and what was found — the same on every route that takes a body.
@Suite(.ownThreads, .serialized) struct RequestBodyRuleTests {
    static let token = "body-rule-token-0123456789abcdef"
    static let settings = #"""
    {"enabled_modules": ["sample"],
     "http": {"listen": "127.0.0.1:0", "tokens": ["${env:AGENT_API_TOKEN}"],
              "users": {"alice": {"password_hash": "HASH"}}},
     "processes": {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 1}},
     "tasks": {"job": {"type": "command", "command": ["/bin/true"], "input": {"type": "object", "properties": {"n": {"type": "integer"}}}}}}
    """#

    static func start() throws -> (AgentRun, String) {
        try AgentRun.listening(settings: settings.replacingOccurrences(of: "HASH", with: try APIAgent.hash("secret")), environment: ["AGENT_API_TOKEN": token])
    }

    /// curl's own arguments: `-d` (its default type, application/x-www-form-urlencoded) and
    /// the headers as given (`Content-Type:` with nothing after it removes the header).
    static func post(_ base: String, _ path: String, _ body: String, _ headers: [String] = []) throws -> CurlResponse {
        var extra = ["-H", "Authorization: Bearer \(token)"]
        for header in headers { extra += ["-H", header] }
        return try curl("POST", base + path, body: body, extra: extra)
    }

    @Test func jsonIsReadWithoutContentTypeWithCurlsDefaultAndWithAnyJSONType() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let body = #"{"input": {"n": 7}, "priority": "high"}"#
        for headers in [[], ["Content-Type:"], ["Content-Type: application/json"], ["Content-Type: application/json; charset=UTF-8"],
                        [#"Content-Type: Application/JSON;charset="utf-8""#], ["Content-Type: application/vnd.agent+json"]] {
            let answer = try Self.post(base, "/api/tasks/job/run", body, headers)
            let run = answer.json?["run"] as? [String: Any]
            #expect(answer.status == 200 && run?["priority"] as? String == "high" && (run?["input"] as? [String: Any])?["n"] as? Int == 7,
                    "\(headers): \(answer.description)")
        }
        // A byte order mark before the JSON is skipped (RFC 8259 lets a reader ignore it).
        let marked = try Self.post(base, "/api/tasks/job/run", "\u{FEFF}" + body, ["Content-Type: application/json"])
        #expect(marked.status == 200, "\(marked.description)")
        // An HTML form is read as its fields, typed by the schema.
        let form = try Self.post(base, "/api/tasks/job/run", "priority=low&csrf=ignored", ["Content-Type: application/x-www-form-urlencoded"])
        #expect(form.status == 200 && (form.json?["run"] as? [String: Any])?["priority"] as? String == "low", "\(form.description)")
        // The login reads its body by the same rule: curl -d with JSON is a JSON login, not a form's redirect.
        let login = try curl("POST", base + "/api/login", body: #"{"user": "alice", "password": "secret"}"#)
        #expect(login.status == 200 && login.json?["user"] as? String == "alice", "\(login.description)")
    }

    @Test func anotherContentTypeIs415SayingWhatWasExpectedAndFound() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let body = #"{"priority": "high"}"#
        let expected = "expected application/json (or no Content-Type; UTF-8); found Content-Type "
        for (header, says) in [("text/plain", #""text/plain""#), ("multipart/form-data; boundary=x", #""multipart/form-data; boundary=x""#),
                               ("application/json; charset=iso-8859-1", #""application/json; charset=iso-8859-1": JSON is read as UTF-8 only"#),
                               ("application/json; charset=", #""application/json; charset=": JSON is read as UTF-8 only"#),
                               ("application/merge-patch+json", #""application/merge-patch+json": the API applies no patches"#)] {
            let answer = try Self.post(base, "/api/tasks/job/run", body, ["Content-Type: " + header])
            #expect(answer.status == 415 && answer.json?["code"] as? String == "unsupported_media_type", "\(header): \(answer.description)")
            let error = (answer.json?["error"] as? String) ?? ""
            #expect(error.hasPrefix(expected + says), "\(header): \(answer.description)")
        }
        let login = try curl("POST", base + "/api/login", headers: ["Content-Type": "text/plain"], body: #"{"user": "alice", "password": "secret"}"#)
        #expect(login.status == 415, "\(login.description)")
        // No body has no type to refuse; a body that is JSON but no object is refused as such.
        let empty = try curl("POST", base + "/api/processes/trades/restart", headers: ["Authorization": "Bearer \(Self.token)", "Content-Type": "text/plain"])
        #expect(empty.status == 200, "\(empty.description)")
        for headers in [["Content-Type: application/json"], []] {
            // With curl -d's form type too: a form encoder never writes `null`.
            let null = try Self.post(base, "/api/tasks/job/run", "null", headers)
            #expect(null.status == 400 && null.json?["error"] as? String == "the body must be a JSON object; found null", "\(headers): \(null.description)")
        }
        let blank = try curl("POST", base + "/api/processes/trades/restart", headers: ["Authorization": "Bearer \(Self.token)", "Content-Type": "application/json"], body: " \n")
        #expect(blank.status == 200, "whitespace is no fields: \(blank.description)")
        // Nothing was queued by a refused request.
        let runs = try curl("GET", base + "/api/runs?task=job", headers: ["Authorization": "Bearer \(Self.token)"]).json?["runs"] as? [Any] ?? []
        #expect(runs.isEmpty, "\(runs)")
    }

    /// Members come from one place, each once: a query beside a body (a stale `?if_match=`
    /// overwrote the file), a form field given twice (the last won) or not UTF-8 (read as
    /// empty) are refused with their pointer, as a body's repeated key and bad UTF-8 are.
    @Test func aQueryBesideABodyAndAFormFieldTwiceOrNotUTF8AreRefusedWithTheirPointer() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let form = ["Content-Type: application/x-www-form-urlencoded"]
        let query = try Self.post(base, "/api/tasks/job/run?priority=critical", #"{"priority": "low"}"#, ["Content-Type: application/json"])
        #expect(query.status == 400 && query.json?["pointer"] as? String == "/priority", "\(query.description)")
        #expect((query.json?["error"] as? String)?.contains("is not read on a POST request: send it in the body") == true, "\(query.description)")
        let twice = try Self.post(base, "/api/tasks/job/run", "priority=low&priority=critical", form)
        #expect(twice.status == 400 && twice.json?["error"] as? String == #"the form field "priority" appears twice; keep one of them"#, "\(twice.description)")
        #expect(twice.json?["pointer"] as? String == "/priority")
        let latin = try Self.post(base, "/api/tasks/job/run", "priority=%ffow", form)
        #expect(latin.status == 400 && latin.json?["pointer"] as? String == "/priority", "\(latin.description)")
        // A settings change's stale precondition in the query: refused, naming the header.
        let stale = try curl("PUT", base + "/api/tasks/job?if_match=0000000000000000-1", headers: ["Authorization": "Bearer \(Self.token)"],
                             body: #"{"definition": {"type": "command", "command": ["/bin/false"]}}"#)
        #expect(stale.status == 400 && (stale.json?["error"] as? String)?.contains("send it in the body or as the If-Match header") == true, "\(stale.description)")
        let runs = try curl("GET", base + "/api/runs?task=job", headers: ["Authorization": "Bearer \(Self.token)"]).json?["runs"] as? [Any] ?? []
        #expect(runs.isEmpty, "\(runs)")
        let task = try curl("GET", base + "/api/tasks/job", headers: ["Authorization": "bearer  \(Self.token) "])
        #expect(task.status == 200 && task.body.contains("/bin/true"), "the scheme in any case, spaces around the token: \(task.description)")
    }

    /// A chunked body whose framing is broken is a bad request, not one too large.
    @Test func aChunkedBodyWithABrokenChunkSizeIs400() throws {
        let (agent, base) = try Self.start()
        defer { _ = agent.stop() }
        let port = try #require(Int(base.split(separator: ":").last ?? ""))
        let client = try RawHTTP(port: port)
        try client.send("POST /api/tasks/job/run HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer \(Self.token)\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nabc\r\n0\r\n\r\n")
        let reply = try client.receiveReply()
        #expect(reply.status == 400, "\(reply)")
        #expect(try curl("GET", base + "/api/status", headers: ["Authorization": "Bearer \(Self.token)"]).status == 200)
    }
}
