import AgentBase
import JSONSchema

/// Who may run a command, decided by the command layer on the resolved command (not by a
/// prompt or a path's spelling): for the fronts that carry their caller's role (a chat's tool
/// calls, MCP over HTTP). The HTTP routes check the same rule in their middleware.
public enum CommandAccess {
    /// Why `caller` may not run `command`, or nil when it may: a command that needs the admin
    /// role (``AnyAgentCommand/requiresAdmin``) needs a caller with that role. A person's own
    /// action (`workflow_approve`, `task_complete`) passes here; the command then checks that
    /// it is that person's (an approver, the run's assignee).
    public static func refusal(_ command: AnyAgentCommand, caller: CommandCaller) -> CommandError? {
        guard command.requiresAdmin, caller.role != "admin" else { return nil }
        let who = caller.user ?? "this \(caller.front) caller"
        let role = caller.role.map { "the \($0) role" } ?? "no role"
        let reason = command.declarations.first?.adminReason ?? "it changes something"
        return CommandError(.forbidden, "\(who) has \(role): \(command.name) needs the admin role, as \(reason)")
    }
}
