@testable import AgentCommands
import AgentTestSupport
import JSONSchema
import Testing

/// The registry holds every command once, each typed (its schema, decoding and host declared
/// by its feature).
@Suite(.ownThreads) struct CommandRegistryTests {
    @Test func theRegistryHoldsEveryCommandOnce() {
        let registry = CommandRegistry.standard
        #expect(registry.names.count == 74, "\(registry.names)")
        #expect(Set(registry.names).count == registry.names.count)
    }

    /// The work commands keep their access: a person's action (completing a run, deciding an
    /// approval) needs no admin role, every other change does.
    @Test func theWorkflowAndAssignmentCommandsKeepTheirAccess() {
        let registry = CommandRegistry.standard
        let persons: Set = ["task_complete", "task_fail", "workflow_approve", "workflow_reject"]
        let names = ["workflow_list", "workflow_run", "workflow_runs", "workflow_show", "workflow_cancel", "workflow_approve", "workflow_reject",
                     "workflow_get", "workflow_create", "workflow_update", "workflow_delete", "workflow_add_step",
                     "task_assign", "task_unassign", "task_set_strategy", "task_assignments", "task_complete", "task_fail",
                     "executor_list", "executor_drain", "executor_resume"]
        for name in names {
            guard let command = registry.command(named: name) else {
                Issue.record("\(name) is not registered")
                continue
            }
            #expect(command.requiresAdmin == (command.mutating && !persons.contains(name)), "\(name): requiresAdmin \(command.requiresAdmin)")
            #expect(command.declarations.allSatisfy { $0.requiresAdmin == command.requiresAdmin }, "\(name): a route differs")
        }
    }

    @Test func aRequestIsRefusedWithThePointerOfItsFirstProblem() {
        let registry = CommandRegistry.standard
        let cases: [(JSONValue, String)] = [
            (["command": "chat", "text": 5], "/text"),
            (["command": "process", "action": "stop", "name": "a", "colour": "red"], "/colour"),
            (["command": "process", "action": "halt", "name": "a"], "/action"),
            (["command": "stauts"], "/command"),
            (["command": "workflow_run", "name": "w", "wait": "yes"], "/wait"),
            (["command": "workflow_create", "name": "w", "definition": [1]], "/definition"),
            (["command": "task_set_strategy", "strategy": "fastest"], "/strategy"),
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
