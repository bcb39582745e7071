import AgentBase
import AgentCommands
import AgentVersion
import Hummingbird
import JSONSchema

/// `POST /mcp`: the agent's commands as MCP tools over Streamable HTTP (one JSON-RPC message a
/// request, answered with JSON; a notification with 202). Behind the same bearer tokens as the
/// API: a tool runs as the token's name and role (``CommandAccess``), checked by the registry,
/// audited with the front `mcp`. A browser session is refused (no CSRF token in MCP).
struct MCPRoutes: Sendable {
    static let path = "/mcp"
    let commands: CommandCenter
    let maximumBodyBytes: Int

    static let documentation: [RouteDescription] = [
        RouteDescription("POST", path, operationID: "mcp", summary: "The Model Context Protocol (Streamable HTTP, JSON answers): initialize, ping, tools/list, tools/call — the agent's commands as tools, each run with the token's role. Bearer tokens only.", tag: "mcp",
                         body: CommandDescription.object(["jsonrpc": ["const": "2.0"], "method": ["type": "string"], "id": ["type": ["string", "number"]], "params": ["type": "object"]],
                                                         required: ["jsonrpc"], open: true),
                         answers: [.json("200", "The JSON-RPC response (a tool's refusal is a result with isError).", CommandDescription.object(["jsonrpc": ["const": "2.0"]], required: ["jsonrpc"], open: true)),
                                   RouteDescription.Answer("202", "A notification: nothing to answer.", content: []),
                                   .json("400", "Not a JSON-RPC request this server takes (not JSON, a batch, wrong params): the JSON-RPC error.", CommandDescription.object(["jsonrpc": ["const": "2.0"], "error": ["type": "object"]], required: ["jsonrpc", "error"], open: true)),
                                   .error("401", "No credentials."),
                                   .error("403", "A browser session (MCP takes a bearer token)."),
                                   .error("413", "The body is larger than http.max_body_bytes."),
                                   .error("415", "A body of another Content-Type than JSON (application/json, or none; UTF-8).")]),
    ]

    func register(on router: Router<AgentRequestContext>) {
        router.post(RouterPath(Self.path)) { request, context in await respond(request, context) }
    }

    func respond(_ request: Request, _ context: AgentRequestContext) async -> Response {
        guard let identity = context.identity else { return APIResponse.error(.unauthorized, code: "unauthorized", "MCP needs a bearer token (Authorization: Bearer TOKEN)") }
        guard !identity.bySession else {
            return APIResponse.error(.forbidden, code: "forbidden", "MCP takes a bearer token, not a browser session (a page could send it without a CSRF token)")
        }
        // The API's rule for the body's type (a JSON-RPC message is JSON): text/plain and the
        // like are refused with 415, as on every other route.
        if case .failure(let refusal) = APIRequestBody.kind(of: request.headers[.contentType]) { return refusal.response }
        let body: ByteBuffer
        switch await APIRequestBody.collect(request, limit: maximumBodyBytes) {
        case .success(let collected): body = collected
        case .failure(let refusal): return refusal.response
        }
        let caller = CommandCaller(front: "mcp", user: identity.name, address: context.remoteAddress, role: identity.role.rawValue)
        let commands = self.commands
        let server = MCPServer(version: AgentVersion.current, refusal: { tool in
            // A token's grants (`publish`, `signal`) run their commands here as over the API.
            if identity.mayRun(needingAdminOr: tool.command.declarations.first?.grant) { return nil }
            guard let refused = CommandAccess.refusal(tool.command, caller: caller) else { return nil }
            commands.recordAudit("tools/call \(tool.name) → refused: \(refused.message)", caller: caller)
            return refused
        }, execute: { request in await commands.execute(request, caller: caller) })
        guard let answer = await server.handle(bytes: body.readableBytesView) else {
            return Response(status: .accepted, headers: [.cacheControl: "no-store"])
        }
        // A message the server cannot take is refused with 400 (Streamable HTTP), its JSON-RPC
        // error in the body; an unknown method is a JSON-RPC answer like any other.
        let code = answer["error"]?["code"]?.numberValue?.intValue
        let refused = code == MCPServer.Code.parse.rawValue || code == MCPServer.Code.invalidRequest.rawValue || code == MCPServer.Code.invalidParams.rawValue
        return APIResponse.json(answer, status: refused ? .badRequest : .ok)
    }
}
