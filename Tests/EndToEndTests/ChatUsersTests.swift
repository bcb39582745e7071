import AgentTestSupport
import Foundation
import GRDB
import Testing

/// Conversations by user through the real agent: every line kept with its user (`chat --user`,
/// the control socket's OS user, the HTTP login), histories listed and cleared per user and per
/// conversation with the role checks of each front, transcripts, summaries and preferences.
@Suite(.ownThreads, .serialized) struct ChatUsersTests {
    static let tokens = #""tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:AGENT_READ_TOKEN}", "role": "read", "name": "grafana"}]"#
    static let admin = APIAgent.bearer(APIAgent.adminToken)
    static let reader = APIAgent.bearer(APIAgent.readToken)
    static let json = ["Content-Type": "application/json"]

    /// An agent with a feed, a monitor raising alerts and a chatbot (`chat` adds to its settings).
    static func agent(_ chat: String = #""logic_adapters": ["features", "status"]"#) throws -> APIAgent {
        let agent = try APIAgent(http: tokens, processes: """
        {"trades": {"type": "trade_feed", "pairs": ["X/Y"], "interval": 0.01},
         "busy": {"type": "trade_frequency", "window": 30, "threshold": 5},
         "chat": {"type": "chatbot", \(chat)}}
        """)
        #expect(HTTPAgent.eventually { (try? pid(agent, "chat")) != nil }, "\(agent.run.transcript)")
        return agent
    }

    static func cli(_ agent: APIAgent, _ arguments: [String]) throws -> ProgramResult {
        try runProgram("agent-control", ["chat"] + arguments + ["--settings", agent.run.settingsFile])
    }

    static func send(_ agent: APIAgent, _ method: String, _ path: String, _ headers: [String: String], _ body: [String: Any]? = nil) throws -> CurlResponse {
        let text = try body.map { String(decoding: try JSONSerialization.data(withJSONObject: $0), as: UTF8.self) }
        return try agent.request(method, path, headers: body == nil ? headers : headers.merging(json) { $1 }, body: text)
    }

    /// The lines of a history answer as `user: text`.
    static func lines(_ response: CurlResponse) -> [String] {
        (response.json?["lines"] as? [[String: Any]] ?? []).map { "\($0["user"] as? String ?? "-"): \($0["text"] as? String ?? "")" }
    }

    static func pid(_ agent: APIAgent, _ name: String) throws -> Int? {
        let processes = try agent.request("GET", "/api/status", headers: admin).json?["processes"] as? [[String: Any]]
        return processes?.first { $0["name"] as? String == name && $0["state"] as? String == "running" }?["pid"] as? Int
    }

    /// This process's OS user name: whom `agent-control chat` speaks for unless --user names another.
    static var me: String { String(cString: getpwuid(getuid())!.pointee.pw_name) }

    @Test func twoUsersHistoriesAreKeptApartAndClearedApart() throws {
        let agent = try Self.agent()
        for user in ["ann", "bob"] {
            let sent = try Self.cli(agent, ["what is the status of the processes?", "--user", user, "--conversation", "ops"])
            #expect(sent.status == 0 && sent.stdout.contains("trades: running"), "\(sent.stdout)\(sent.stderr)")
        }
        // Without --user: the OS user the control socket sees.
        #expect(try Self.cli(agent, ["what can you do?", "--conversation", "ops"]).status == 0)

        let ann = try Self.cli(agent, ["history", "--user", "ann"])
        #expect(ann.stdout.contains("[ops] ann> what is the status of the processes?"), "\(ann.stdout)\(ann.stderr)")
        #expect(!ann.stdout.contains("bob>") && !ann.stdout.contains("what can you do?"), "\(ann.stdout)")
        let mine = try Self.cli(agent, ["history", "--user", Self.me, "--conversation", "ops"])
        #expect(mine.stdout.contains("you> what can you do?") && !mine.stdout.contains("ann>"), "\(mine.stdout)\(mine.stderr)")

        #expect(try Self.cli(agent, ["clear", "--user", "ann", "--conversation", "ops"]).status == 0)
        // The clear is committed by the store's writer after the answer.
        var all = ""
        #expect(try HTTPAgent.eventually(timeout: 30) {
            all = try Self.cli(agent, ["history", "--conversation", "ops"]).stdout
            return !all.contains("ann>")
        }, "\(all)")
        #expect(all.contains("bob> what is the status of the processes?") && all.contains("you> what can you do?"), "\(all)")

        let unknown = try Self.cli(agent, ["clear", "--conversation", "never-spoken-in"])
        #expect(unknown.status != 0 && unknown.stderr.contains("no conversation \"never-spoken-in\""), "\(unknown.stdout)\(unknown.stderr)")
        let deleted = try Self.send(agent, "DELETE", "/api/chat/never-spoken-in", Self.admin)
        #expect(deleted.status == 404, "\(deleted.body)")
        #expect(try Self.pid(agent, "chat") != nil)
    }

    @Test func aNonAdminSpeaksReadsAndClearsOnlyAsThemself() throws {
        let agent = try Self.agent()
        let own = try Self.send(agent, "POST", "/api/chat", Self.reader, ["text": "what can you do?", "conversation": "ops"])
        #expect(own.status == 200, "\(own.body)")
        for claim: [String: Any] in [["user": "bob"], ["context": ["user": "bob"]]] {
            let refused = try Self.send(agent, "POST", "/api/chat", Self.reader, claim.merging(["text": "hello", "conversation": "ops"]) { $1 })
            #expect(refused.status == 403, "\(claim): \(refused.body)")
            #expect(refused.body.contains("only the admin role may act for another user"), "\(refused.body)")
        }
        #expect(try Self.send(agent, "POST", "/api/chat", Self.admin, ["text": "what can you do?", "conversation": "ops", "user": "bob"]).status == 200)

        // The same conversation: the reader sees their own lines, the admin everyone's.
        let seen = Self.lines(try Self.send(agent, "GET", "/api/chat/ops", Self.reader))
        #expect(seen.contains("grafana: what can you do?") && !seen.contains { $0.hasPrefix("bob:") }, "\(seen)")
        #expect(Self.lines(try Self.send(agent, "GET", "/api/chat/ops", Self.admin)).contains("bob: what can you do?"))
        #expect(try Self.send(agent, "GET", "/api/chat/users/bob/history", Self.reader).status == 403)
        #expect(try Self.send(agent, "DELETE", "/api/chat/users/bob/history", Self.reader).status == 403)
        #expect(Self.lines(try Self.send(agent, "GET", "/api/chat/users/bob/history?conversation=ops", Self.admin)).first == "bob: what can you do?")

        // The reader's clear of the conversation is of their own lines only.
        let cleared = try Self.send(agent, "DELETE", "/api/chat/ops", Self.reader)
        #expect(cleared.status == 200, "\(cleared.body)")
        var left: [String] = []
        #expect(try HTTPAgent.eventually(timeout: 30) {
            left = Self.lines(try Self.send(agent, "GET", "/api/chat/ops", Self.admin))
            return !left.contains { $0.hasPrefix("grafana:") }
        }, "\(left)")
        #expect(left.contains("bob: what can you do?"), "\(left)")
        // Their own conversation only: one they have no line in is not found.
        #expect(try Self.send(agent, "DELETE", "/api/chat/ops", Self.reader).status == 404)
    }

    @Test func aTranscriptComesAsTextMarkdownAndJSON() throws {
        let agent = try Self.agent()
        #expect(try Self.cli(agent, ["what is the status of the processes?", "--user", "ann", "--conversation", "night shift"]).status == 0)
        let path = "/api/chat/conversations/night%20shift/transcript"
        let text = try Self.send(agent, "GET", path + "?format=text", Self.admin).json?["text"] as? String ?? ""
        #expect(text.contains(" ann: what is the status of the processes?\n") && text.contains(" bot (status): "), "\(text)")
        let markdown = try Self.cli(agent, ["transcript", "night shift", "--format", "markdown"]).stdout
        #expect(markdown.hasPrefix("# Conversation night shift\n\n2 message(s), "), "\(markdown)")
        #expect(markdown.contains("- **ann** (") && markdown.contains("- **bot \\(status\\)** ("), "\(markdown)")
        let json = try Self.send(agent, "GET", path + "?format=json", Self.admin)
        let lines = json.json?["lines"] as? [[String: Any]] ?? []
        #expect(lines.map { $0["role"] as? String ?? "" } == ["user", "bot"], "\(json.body)")
        #expect(lines.first?["user"] as? String == "ann" && lines.last?["source"] as? String == "status", "\(json.body)")
        let bad = try Self.send(agent, "GET", path + "?format=pdf", Self.admin)
        #expect(bad.status == 400 && bad.body.contains("/format"), "\(bad.body)")
        #expect(try Self.send(agent, "GET", "/api/chat/conversations/nobody-here/transcript", Self.admin).status == 404)
    }

    @Test func aTranscriptCutAtItsSizeSaysSoInEveryFormat() throws {
        let agent = try Self.agent()
        // 10,050 lines: over the 10,000 a transcript holds.
        let store = URL(fileURLWithPath: agent.run.settingsFile).deletingLastPathComponent().path + "/.agent/data/agent.sqlite"
        let database = try DatabaseQueue(path: store)
        try database.write { db in
            for index in 0..<10_050 {
                try db.execute(sql: "INSERT INTO chat (time, conversation, role, source, text, user) VALUES (?, 'long', 'user', '', ?, 'ann')",
                               arguments: [1_700_000_000 + Double(index), "\(index) x"])
            }
        }
        try database.close()
        for format in ["text", "markdown", "json"] {
            let written = try Self.cli(agent, ["transcript", "long", "--format", format])
            #expect(written.status == 0 && written.stderr.contains("note: the conversation has more lines than a transcript holds"),
                    "\(format): \(written.stderr)")
            #expect(written.stdout.contains("10049 x") && !written.stdout.contains("\"0 x") && !written.stdout.contains(": 0 x"), "\(format)")
            if format == "markdown" { #expect(written.stdout.contains("\n\nThe newest "), "\(written.stdout.prefix(200))") }
        }
        let whole = try Self.cli(agent, ["transcript", "default", "--format", "text"])
        #expect(!whole.stderr.contains("note:"), "\(whole.stderr)")
    }

    @Test func theSummarySaysWhenWhoHowManyTopicsAlertsAndActions() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.toolCalls([("status", "{}")]), .text("All runs."), .text("Ann checked the agent: all runs."), .status(500, "down"))
        let agent = try Self.agent(#""logic_adapters": [{"type": "llm", "base_url": "\#(stub.baseURL)", "model": "m", "confidence": 0.9, "tools": ["status"]}]"#)
        // The monitor's alerts join the default conversation.
        #expect(try HTTPAgent.eventually { Self.lines(try Self.send(agent, "GET", "/api/chat/default", Self.admin)).contains { $0.hasPrefix("-: X/Y") } })
        #expect(try Self.cli(agent, ["how is the agent?", "--user", "ann"]).stdout == "bot> All runs.\n")
        let summary = try Self.send(agent, "GET", "/api/chat/conversations/default/summary", Self.admin).json ?? [:]
        #expect(summary["method"] as? String == "extractive", "\(summary)")
        #expect(summary["users"] as? [String] == ["ann"], "\(summary)")
        #expect((summary["messages"] as? [String: Int])?["user"] == 1 && (summary["messages"] as? [String: Int])?["bot"] == 1, "\(summary)")
        #expect((summary["topics"] as? [[String: Any]])?.first?["adapter"] as? String == "llm", "\(summary)")
        #expect((summary["alerts"] as? [[String: Any]])?.first?["source"] as? String == "busy", "\(summary)")
        let action = (summary["actions"] as? [[String: Any]])?.first
        #expect(action?["tool"] as? String == "status" && action?["outcome"] as? String == "ok" && action?["user"] as? String == "ann", "\(summary)")
        #expect((summary["text"] as? String)?.contains("from ann. Topics: llm (1). ") == true, "\(summary)")
        #expect(try Self.cli(agent, ["summary", "nobody-here"]).status != 0)
        #expect(try Self.pid(agent, "chat") != nil)
    }

    @Test func theLanguageModelSumsUpWhenAskedAndTheLinesDoWhenItFails() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.text("Noted."), .text("Ann said hello; the bot noted it."), .status(500, "the model is down"))
        let agent = try Self.agent(#""logic_adapters": [{"type": "llm", "base_url": "\#(stub.baseURL)", "model": "m", "confidence": 0.9, "summary": true}]"#)
        #expect(try Self.cli(agent, ["hello", "--user", "ann", "--conversation", "ops"]).stdout == "bot> Noted.\n")
        let made = try Self.send(agent, "GET", "/api/chat/conversations/ops/summary", Self.admin).json ?? [:]
        #expect(made["method"] as? String == "language_model" && made["text"] as? String == "Ann said hello; the bot noted it.", "\(made)")
        // The model got the transcript, and no tools.
        let asked = stub.requests.last ?? [:]
        let prompt = (asked["messages"] as? [[String: Any]])?.last?["content"] as? String ?? ""
        #expect(prompt.contains(" ann: hello\n") && asked["tools"] == nil, "\(asked)")
        let fallback = try Self.cli(agent, ["summary", "ops"])
        #expect(fallback.stdout.hasPrefix("2 message(s) from "), "\(fallback.stdout)\(fallback.stderr)")
        #expect(fallback.stdout.contains("(made without the language model, which failed: the llm adapter llm failed: "), "\(fallback.stdout)")
        // The summaries joined no conversation.
        #expect(Self.lines(try Self.send(agent, "GET", "/api/chat/ops", Self.admin)) == ["ann: hello", "ann: Noted."])
    }

    @Test func preferencesAreValidatedKeptAndGivenToTheAdapters() throws {
        let stub = try ChatCompletionStub()
        defer { stub.stop() }
        stub.script(.text("Bonjour."))
        let schema = #"{"type": "object", "properties": {"timezone": {"type": "string"}, "max_lines": {"type": "integer", "minimum": 1}}}"#
        let agent = try Self.agent(#""preferences_schema": \#(schema), "logic_adapters": [{"type": "llm", "base_url": "\#(stub.baseURL)", "model": "m", "confidence": 0.9}]"#)
        let chatbot = try Self.pid(agent, "chat")
        let set = try Self.cli(agent, ["preferences", "--user", "ann", "--set", "language=fr", "--set", "units=metric", "--set", "timezone=Europe/Paris"])
        #expect(set.status == 0 && set.stdout.contains(#""language":"fr""#) && set.stdout.contains(#""timezone":"Europe/Paris""#), "\(set.stdout)\(set.stderr)")
        let bad = try Self.cli(agent, ["preferences", "--user", "ann", "--set", "max_lines=0"])
        #expect(bad.status != 0, "\(bad.stdout)")
        #expect(bad.stderr.contains("/custom/max_lines: expected") && bad.stderr.contains("found 0") && bad.stderr.contains("/processes/chat/preferences_schema"), "\(bad.stderr)")
        let units = try Self.send(agent, "PUT", "/api/chat/users/grafana/preferences", Self.reader, ["units": "furlongs"])
        #expect(units.status == 400 && units.json?["pointer"] as? String == "/units", "\(units.body)")
        #expect(try Self.send(agent, "PUT", "/api/chat/users/grafana/preferences", Self.reader, ["verbosity": "brief"]).status == 200)
        #expect(try Self.send(agent, "PUT", "/api/chat/users/ann/preferences", Self.reader, ["verbosity": "brief"]).status == 403)
        #expect(try Self.send(agent, "GET", "/api/chat/users/ann/preferences", Self.reader).status == 403)
        let kept = try Self.send(agent, "GET", "/api/chat/users/ann/preferences", Self.admin).json?["preferences"] as? [String: Any]
        #expect(kept?["language"] as? String == "fr" && (kept?["custom"] as? [String: Any])?["max_lines"] == nil, "\(String(describing: kept))")

        // The llm adapter's prompt carries them.
        #expect(try Self.cli(agent, ["bonjour", "--user", "ann"]).stdout == "bot> Bonjour.\n")
        let system = (stub.requests.last?["messages"] as? [[String: Any]])?.first?["content"] as? String ?? ""
        #expect(system.contains(#"language fr, units metric, timezone "Europe/Paris""#), "\(system)")
        #expect(try Self.pid(agent, "chat") == chatbot)
    }

    @Test func aProgramAdapterFindsTheSendersPreferencesInItsContext() throws {
        let adapter = ProgramModuleFixture.prelude + """
            send({"ready": True})
            for frame in frames():
                if frame.get("stop"):
                    break
                if "chat" in frame:
                    context = frame["chat"]["context"]
                    text = "%s prefers %s" % (context["user"], context["preferences"].get("language"))
                    send({"answer": {"confidence": 0.9, "text": text}})

            """
        let manifest = ProgramModuleFixture.manifest(name: "prefs", types: [("echo", "logic_adapter", "adapter.py", #""examples": ["who am I?"]"#)])
        let directory = try ProgramModuleFixture.write(name: "prefs", manifest: manifest, files: ["adapter.py": adapter])
        let run = try AgentRun(settings: #"{"enabled_modules": ["prefs"], "processes": {"chat": {"type": "chatbot", "logic_adapters": ["prefs.echo"]}}}"#,
                               arguments: ["--no-build", "--quiet"], directory: directory)
        #expect(run.waitForLine(onStderr: true) { $0.contains("[chat] ready in") } != nil, "\(run.transcript)")
        let set = try runProgram("agent-control", ["chat", "preferences", "--user", "ann", "--set", "language=de", "--settings", run.settingsFile])
        #expect(set.status == 0, "\(set.stderr)")
        let answer = try runProgram("agent-control", ["chat", "who am I?", "--user", "ann", "--settings", run.settingsFile])
        #expect(answer.stdout == "bot> ann prefers de\n", "\(answer.stdout)\(answer.stderr)\n\(run.transcript)")
        #expect(run.stop() == 0)
    }
}
