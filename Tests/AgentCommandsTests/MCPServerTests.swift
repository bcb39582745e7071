@testable import AgentBase
@testable import AgentCommands
import AgentTestSupport
import Foundation
import JSONSchema
import Testing

/// The MCP server's JSON-RPC on the command registry, without a transport: what every message
/// gets (a result, a protocol error, nothing for a notification), and that a tool call is the
/// command's request checked by the registry, refused for the caller's role before it runs.
@Suite(.ownThreads) struct MCPServerTests {
    final class Calls: @unchecked Sendable {
        let lock = NSLock()
        var requests: [JSONValue] = []
    }

    static func server(_ calls: Calls, role: String? = "admin") -> MCPServer {
        MCPServer(version: "test", refusal: { tool in
            CommandAccess.refusal(tool.command, caller: CommandCaller(front: "mcp", user: "ann", role: role))
        }, execute: { request in
            calls.lock.withLock { calls.requests.append(request) }
            return ["ok": true]
        })
    }

    static func code(_ answer: JSONValue?) -> Int? { answer?["error"]?["code"]?.numberValue?.intValue }

    @Test func everyMessageGetsItsAnswer() async throws {
        let calls = Calls()
        let server = Self.server(calls)
        let initialized = await server.handle(["jsonrpc": "2.0", "id": 1, "method": "initialize", "params": ["protocolVersion": "1999-01-01"]])
        #expect(initialized?["result"]?["protocolVersion"] == "2025-06-18")
        #expect(await server.handle(["jsonrpc": "2.0", "method": "notifications/initialized"]) == nil)
        let tools = await server.handle(["jsonrpc": "2.0", "id": "a", "method": "tools/list"])?["result"]?["tools"]?.arrayValue ?? []
        #expect(tools.count == CommandTools.all.count && tools.contains { $0["name"] == "process_restart" })
        #expect(Self.code(await server.handle(["jsonrpc": "2.0", "id": 2, "method": "resources/read"])) == -32601)
        #expect(Self.code(await server.handle(bytes: Array("{".utf8))) == -32700)
        #expect(Self.code(await server.handle(.array([["jsonrpc": "2.0", "id": 3, "method": "ping"]]))) == -32600)
        #expect(Self.code(await server.handle(["jsonrpc": "2.0", "id": ["x": 1], "method": "ping"])) == -32600)
        #expect(Self.code(await server.handle(["jsonrpc": "2.0", "id": 4, "method": "ping", "params": [1]])) == -32602)
        #expect(Self.code(await server.handle(["jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ["name": "status", "arguments": "{}"]])) == -32602)
        let unknown = await server.handle(["jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": ["name": "proces_restart"]])
        #expect(unknown?["error"]?["message"]?.stringValue?.contains(#"did you mean "process_restart"?"#) == true)
        // 50 MB is refused before it is parsed.
        let huge = [UInt8](repeating: 32, count: 50 << 20)
        #expect(Self.code(await server.handle(bytes: huge)) == -32600)
        // A huge unknown tool name costs no more than its first 100 characters.
        let name = String(repeating: "p", count: 1 << 20)
        #expect(Self.code(await server.handle(["jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": ["name": .string(name)]])) == -32602)
        #expect(calls.requests.isEmpty)
    }

    @Test func aCallIsTheCommandsRequestAndTheRoleDecides() async throws {
        let calls = Calls()
        let called = await Self.server(calls).handle(["jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": ["name": "process_restart", "arguments": ["name": "trades"]]])
        #expect(called?["result"]?["isError"] == false)
        #expect(calls.requests == [["name": "trades", "action": "restart", "command": "process"]])
        // The route's fixed member cannot be changed by the arguments.
        let changed = await Self.server(calls).handle(["jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": ["name": "process_restart", "arguments": ["name": "t", "action": "stop"]]])
        #expect(changed?["result"]?["isError"] == true && changed?["result"]?["structuredContent"]?["pointer"] == "/action")
        let reader = Self.server(calls, role: "read")
        let refused = await reader.handle(["jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": ["name": "process_restart", "arguments": ["name": "trades"]]])
        #expect(refused?["result"]?["isError"] == true)
        #expect(refused?["result"]?["structuredContent"]?["error"] == "ann has the read role: process needs the admin role, as it changes something")
        // A person's own action (an approval) and a read pass to the command, which checks the rest.
        #expect(await reader.handle(["jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": ["name": "status"]])?["result"]?["isError"] == false)
        #expect(await reader.handle(["jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": ["name": "workflow_approve", "arguments": ["id": "r", "step": "s"]]])?["result"]?["isError"] == false)
        #expect(calls.requests.count == 3)
    }
}
