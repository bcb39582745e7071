import AgentTestSupport
import Foundation
import Testing

/// The agent's commands as MCP tools, with an MCP client written here: over stdio
/// (`agent-control mcp` as a real process, as a desktop assistant starts it) and over the HTTP
/// front (`POST /mcp`, behind the tokens and their roles).
@Suite(.ownThreads, .serialized) struct MCPTests {
    /// `agent-control mcp` with its stdin and stdout: one JSON-RPC message a line.
    final class StdioClient {
        let process = TestProcess()
        private let input = Pipe(), output = Pipe()
        private var buffer = Data()

        init(_ arguments: [String]) throws {
            process.executableURL = URL(fileURLWithPath: TestPaths.products + "/agent-control")
            process.arguments = ["mcp"] + arguments
            process.standardInput = input
            process.standardOutput = output
            try process.run()
        }

        deinit {
            try? input.fileHandleForWriting.close()
            if process.isRunning { process.terminate() }
            ProcessDeadline.waitForExit(process, within: 60, "agent-control mcp")
        }

        func send(_ line: String) { input.fileHandleForWriting.write(Data((line + "\n").utf8)) }

        func send(_ message: [String: Any]) throws {
            send(String(decoding: try JSONSerialization.data(withJSONObject: message), as: UTF8.self))
        }

        /// The next answer line (blocks until it comes; the suite's watchdog bounds it).
        func receive() throws -> [String: Any] {
            while true {
                if let newline = buffer.firstIndex(of: 10) {
                    let line = buffer[buffer.startIndex..<newline]
                    buffer = Data(buffer[(newline + 1)...])
                    return try JSONSerialization.jsonObject(with: line) as? [String: Any] ?? [:]
                }
                let more = output.fileHandleForReading.availableData
                guard !more.isEmpty else { throw Ended() }
                buffer += more
            }
        }

        func call(_ id: Int, _ method: String, _ params: [String: Any] = [:]) throws -> [String: Any] {
            try send(["jsonrpc": "2.0", "id": id, "method": method, "params": params])
            return try receive()
        }
    }

    struct Ended: Error, CustomStringConvertible { var description: String { "agent-control mcp ended its output" } }

    static func result(_ answer: [String: Any]) -> [String: Any] { answer["result"] as? [String: Any] ?? [:] }
    static func errorCode(_ answer: [String: Any]) -> Int? { (answer["error"] as? [String: Any])?["code"] as? Int }
    static func text(_ answer: [String: Any]) -> String {
        ((result(answer)["content"] as? [[String: Any]])?.first?["text"] as? String) ?? ""
    }

    @Test func aClientOverStdioListsCallsAndIsRefusedClearly() throws {
        let agent = try APIAgent(http: LanguageModelChatTests.tokens)
        let client = try StdioClient(["--settings", agent.run.settingsFile])
        let initialized = try client.call(1, "initialize", ["protocolVersion": "2025-03-26", "capabilities": [:], "clientInfo": ["name": "test", "version": "1"]])
        #expect(Self.result(initialized)["protocolVersion"] as? String == "2025-03-26", "\(initialized)")
        #expect((Self.result(initialized)["serverInfo"] as? [String: Any])?["name"] as? String == "agent-runtime")
        client.send(#"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#)

        let list = try client.call(2, "tools/list")
        #expect(list["id"] as? Int == 2, "a notification was answered: \(list)")
        let tools = Self.result(list)["tools"] as? [[String: Any]] ?? []
        let restart = tools.first { $0["name"] as? String == "process_restart" }
        let schema = restart?["inputSchema"] as? [String: Any]
        #expect((schema?["required"] as? [String]) == ["name"] && (schema?["properties"] as? [String: Any])?["action"] == nil, "\(String(describing: restart))")
        #expect(tools.contains { $0["name"] as? String == "task_run" } && tools.contains { $0["name"] as? String == "workflow_approve" })

        let status = try client.call(3, "tools/call", ["name": "status", "arguments": [:]])
        #expect(Self.result(status)["isError"] as? Bool == false && Self.text(status).contains(#""name":"trades""#), "\(status)")
        let set = try client.call(4, "tools/call", ["name": "memory_set", "arguments": ["key": "from-mcp", "value": 7]])
        #expect(Self.result(set)["isError"] as? Bool == false, "\(set)")
        #expect(try agent.waitForAudit { $0.contains("memory_set from-mcp → ok") } != nil)
        // A call the registry refuses is a tool result with isError and the pointer.
        let invalid = try client.call(5, "tools/call", ["name": "memory_set", "arguments": ["value": 7]])
        #expect(Self.result(invalid)["isError"] as? Bool == true && Self.text(invalid).contains(#""pointer":"/key""#), "\(invalid)")
        // Protocol errors: an unknown tool, an unknown method, not JSON, a batch, too big.
        #expect(Self.errorCode(try client.call(6, "tools/call", ["name": "proces_restart", "arguments": [:]])) == -32602)
        #expect(Self.errorCode(try client.call(7, "resources/list")) == -32601)
        client.send("{not json")
        let parse = try client.receive()
        #expect(Self.errorCode(parse) == -32700 && parse["id"] is NSNull, "\(parse)")
        client.send(#"[{"jsonrpc": "2.0", "id": 8, "method": "ping"}]"#)
        #expect(Self.errorCode(try client.receive()) == -32600)
        client.send(#"{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"pad": ""# + String(repeating: "x", count: 5 << 20) + #""}}"#)
        let big = try client.receive()
        #expect(Self.errorCode(big) == -32600 && ((big["error"] as? [String: Any])?["message"] as? String)?.contains("skipped") == true, "\(big)")
        #expect(Self.result(try client.call(10, "ping")).isEmpty)

        let readOnly = try StdioClient(["--read-only", "--settings", agent.run.settingsFile])
        let offered = Self.result(try readOnly.call(1, "tools/list"))["tools"] as? [[String: Any]] ?? []
        #expect(offered.contains { $0["name"] as? String == "status" } && !offered.contains { $0["name"] as? String == "process_restart" })
    }

    /// Over stdio every call runs as the operator (the socket's admin): `--read-only` offers no
    /// change, not even "a person's own" — `task_complete` would complete anyone's run, and a
    /// `chat` message's tool calls and process control would run with the admin role.
    @Test func theReadOnlyServerOffersNoChangeMadeAsTheOperator() throws {
        let agent = try APIAgent(http: LanguageModelChatTests.tokens)
        let client = try StdioClient(["--read-only", "--settings", agent.run.settingsFile])
        let offered = Set((Self.result(try client.call(1, "tools/list"))["tools"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String })
        #expect(offered.isSuperset(of: ["status", "task_list", "chat_history"]), "\(offered.sorted())")
        for name in ["chat", "task_complete", "task_fail", "workflow_approve", "process_restart", "settings_get"] {
            #expect(!offered.contains(name), "--read-only offers \(name)")
        }
        let chat = try client.call(2, "tools/call", ["name": "chat", "arguments": ["text": "restart trades"]])
        #expect(Self.errorCode(chat) == -32602, "\(chat)")
    }

    /// A read token granted `publish` publishes over `POST /mcp` as over `POST /api/events`
    /// (the grant was ignored: only the role was asked), and may do nothing else it could not.
    @Test func aTokenGrantedPublishPublishesOverMCPAndNothingMore() throws {
        let agent = try APIAgent(http: #""tokens": ["${env:AGENT_API_TOKEN}", {"token": "${env:AGENT_READ_TOKEN}", "role": "read", "name": "feeder", "grants": ["publish"]}]"#)
        func call(_ id: Int, _ tool: String, _ arguments: String) throws -> CurlResponse {
            let headers = APIAgent.bearer(APIAgent.readToken).merging(["Content-Type": "application/json", "Accept": "application/json, text/event-stream"]) { $1 }
            return try agent.request("POST", "/mcp", headers: headers,
                                     body: #"{"jsonrpc": "2.0", "id": \#(id), "method": "tools/call", "params": {"name": "\#(tool)", "arguments": \#(arguments)}}"#)
        }
        let published = try call(1, "event_publish", #"{"type": "order.confirmed", "source": "shop"}"#)
        #expect(published.status == 200 && published.body.contains(#""isError":false"#), "\(published.body)")
        #expect(try agent.waitForAudit { $0.hasPrefix("mcp user feeder") && $0.contains("event_publish order.confirmed") } != nil)
        let other = try call(2, "memory_set", #"{"key": "k", "value": 1}"#)
        #expect(other.body.contains(#""isError":true"#) && other.body.contains("needs the admin role"), "\(other.body)")
        let signal = try call(3, "workflow_signal", #"{"id": "w1", "name": "go"}"#)
        #expect(signal.body.contains(#""isError":true"#) && signal.body.contains("needs the admin role"), "\(signal.body)")
    }

    @Test func theHTTPEndpointRunsToolsWithTheTokensRole() throws {
        let agent = try APIAgent(http: LanguageModelChatTests.tokens)
        func post(_ token: String?, _ message: String) throws -> CurlResponse {
            var headers = ["Content-Type": "application/json", "Accept": "application/json, text/event-stream"]
            if let token { headers.merge(APIAgent.bearer(token)) { $1 } }
            return try agent.request("POST", "/mcp", headers: headers, body: message)
        }
        let initialized = try post(APIAgent.readToken, #"{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18"}}"#)
        #expect(initialized.status == 200 && initialized.body.contains(#""protocolVersion":"2025-06-18""#), "\(initialized.body)")
        #expect(try post(APIAgent.readToken, #"{"jsonrpc": "2.0", "method": "notifications/initialized"}"#).status == 202)
        let list = try post(APIAgent.readToken, #"{"jsonrpc": "2.0", "id": 2, "method": "tools/list"}"#)
        #expect(list.status == 200 && list.body.contains(#""name":"process_restart""#), "\(list.body)")
        let status = try post(APIAgent.readToken, #"{"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "status", "arguments": {}}}"#)
        #expect(status.body.contains(#""isError":false"#), "\(status.body)")

        let pid = try #require(try LanguageModelChatTests.pid(agent, "trades"))
        let refused = try post(APIAgent.readToken, #"{"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "process_restart", "arguments": {"name": "trades"}}}"#)
        #expect(refused.status == 200 && refused.body.contains(#""isError":true"#) && refused.body.contains("grafana has the read role: process needs the admin role"), "\(refused.body)")
        #expect(try LanguageModelChatTests.pid(agent, "trades") == pid)
        let line = try agent.waitForAudit { $0.contains("tools/call process_restart → refused") }
        #expect(line?.hasPrefix("mcp user grafana") == true, "\(String(describing: line))")

        let restarted = try post(APIAgent.adminToken, #"{"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "process_restart", "arguments": {"name": "trades"}}}"#)
        #expect(restarted.body.contains(#""isError":false"#), "\(restarted.body)")
        #expect(HTTPAgent.eventually { ((try? LanguageModelChatTests.pid(agent, "trades")) ?? nil).map { $0 != pid } ?? false })
        #expect(try agent.waitForAudit { $0.hasPrefix("mcp user token #1") && $0.contains("process restart trades → ok") } != nil)

        #expect(try post(nil, #"{"jsonrpc": "2.0", "id": 6, "method": "ping"}"#).status == 401)
        // 50 MB is refused unread, the agent unharmed.
        let huge = try post(APIAgent.adminToken, #"{"jsonrpc": "2.0", "id": 8, "method": "ping", "params": {"pad": ""# + String(repeating: "x", count: 50 << 20) + #""}}"#)
        #expect(huge.status == 413, "\(huge.status) \(huge.body.prefix(300))")
        #expect(try post(APIAgent.adminToken, #"{"jsonrpc": "2.0", "id": 9, "method": "ping"}"#).status == 200)
        #expect(try agent.request("GET", "/mcp", headers: APIAgent.bearer(APIAgent.adminToken)).status == 405)
        let unknown = try post(APIAgent.adminToken, #"{"jsonrpc": "2.0", "id": 7, "method": "sampling/createMessage"}"#)
        #expect(unknown.body.contains(#""code":-32601"#), "\(unknown.body)")
        // A body that says it is not JSON is refused as on every route.
        let plain = try agent.request("POST", "/mcp", headers: APIAgent.bearer(APIAgent.adminToken).merging(["Content-Type": "text/plain"]) { $1 },
                                      body: #"{"jsonrpc": "2.0", "id": 10, "method": "ping"}"#)
        #expect(plain.status == 415 && plain.body.contains(#"found Content-Type \"text/plain\""#), "\(plain.status) \(plain.body)")
    }
}
