import AgentBase
import AgentCommands
import AgentRuntime
import AgentVersion
import ArgumentParser
import Foundation
import JSONSchema

struct Mcp: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mcp",
        abstract: "Serve the running agent's commands as MCP tools over stdio (for desktop assistants and IDEs).",
        discussion: """
        Speaks the Model Context Protocol on stdin and stdout: one JSON-RPC 2.0 message a line \
        (initialize, ping, tools/list, tools/call). Each tool is one of the agent's commands \
        (process_restart, task_run, workflow_approve…) with the command's own request schema; a \
        call goes through the control socket like any agent-control command: checked by the \
        registry, run as the operator, audited. An assistant's configuration names it, e.g. \
        {"command": "agent-control", "args": ["mcp", "-C", "/srv/agent"]}. Over the network, \
        use the HTTP front's POST /mcp with a bearer token instead (the token's role applies).
        """)

    @OptionGroup var location: LocationOptions

    @Option(name: .long, parsing: .upToNextOption, help: "Offer only these tools (default: every command).")
    var tools: [String] = []

    @Flag(name: .long, help: "Offer only the tools that change nothing and need no admin role (the reads).")
    var readOnly = false

    func validate() throws {
        for name in tools where CommandTools.named(name) == nil {
            throw ValidationError("unknown tool \"\(name)\"\(Suggestions.hint(for: name, in: CommandTools.names)); the tools: \(CommandTools.names.joined(separator: ", "))")
        }
    }

    func run() throws {
        let daemon = try location.daemon()
        let paths = daemon.paths
        var offered = tools.isEmpty ? CommandTools.names : tools
        // Every call runs as the operator (the socket's admin), so no change is "a person's own":
        // `task_complete` would complete anyone's run, and a `chat` message's tool calls and
        // process control would run with the admin role.
        if readOnly { offered = offered.filter { CommandTools.named($0).map { !$0.command.requiresAdmin && !$0.mutating } ?? false } }
        let server = MCPServer(tools: offered, version: AgentVersion.current) { request in
            // The socket blocks: on a thread of its own, never on the cooperative pool.
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    do {
                        continuation.resume(returning: try ControlClient.send(request, paths: paths, timeout: 60))
                    } catch {
                        continuation.resume(returning: CommandError(.unavailable, "\(error)").json)
                    }
                }
            }
        }
        MCPLines(server: server).serve()
    }
}
