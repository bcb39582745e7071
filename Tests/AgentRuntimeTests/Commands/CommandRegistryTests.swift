@testable import AgentCommands
@testable import AgentRuntime
import JSONSchema
import Testing

/// The registry holds every command once, and the agent answers each: a typed one by the
/// registry, the others by a handler of the supervisor.
@Suite struct CommandRegistryTests {
    @Test func everyCommandIsTypedOrHasALegacyHandler() {
        let registry = CommandRegistry.standard
        #expect(registry.names.count == 55, "\(registry.names)")
        for command in registry.commands where !command.isTyped && command.executor == .loop {
            #expect(Supervisor.LegacyOwner.of(command.name) != nil, "\(command.name) has no handler")
        }
        for command in registry.commands where command.isTyped {
            #expect(Supervisor.LegacyOwner.of(command.name) == nil, "\(command.name) is typed and still has a legacy handler")
        }
    }

    @Test func onlyTheWorkflowAssignmentAndExecutorCommandsAreLeftUntyped() {
        let untyped = CommandRegistry.standard.commands.filter { !$0.isTyped }.map(\.name)
        for name in untyped {
            #expect(name.hasPrefix("workflow_") || name.hasPrefix("executor_") || name.hasPrefix("task_"),
                    "\(name) is still a legacy command")
        }
        for name in ["memory_set", "chat", "settings_change", "validate", "modules", "reload", "status", "metrics", "readiness",
                     "stop", "diagnostics", "process", "logs", "fleet_status", "settings_get", "chat_history", "chat_clear",
                     "memory_list", "memory_get", "memory_delete", "events", "history"] {
            #expect(CommandRegistry.standard.command(named: name)?.isTyped == true, "\(name) is not typed")
        }
    }

    @Test func aRequestIsRefusedWithThePointerOfItsFirstProblem() {
        let registry = CommandRegistry.standard
        let cases: [(JSONValue, String)] = [
            (["command": "chat", "text": 5], "/text"),
            (["command": "process", "action": "stop", "name": "a", "colour": "red"], "/colour"),
            (["command": "process", "action": "halt", "name": "a"], "/action"),
            (["command": "stauts"], "/command"),
            (["command": 12], "/command"),
            ([1], ""),
        ]
        for (request, pointer) in cases {
            guard case .failure(let refusal) = registry.check(request) else {
                Issue.record("\(request) passed")
                continue
            }
            #expect(refusal.code == .invalid)
            #expect(refusal.pointer == pointer, "\(request): \(refusal)")
        }
        if case .failure(let refusal) = registry.check(["command": "process", "action": "stop", "name": "a"]) {
            Issue.record("a valid request was refused: \(refusal)")
        }
    }
}
