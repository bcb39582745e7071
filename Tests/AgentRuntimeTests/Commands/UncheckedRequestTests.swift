@testable import AgentBase
@testable import AgentCommands
@testable import AgentSupervision
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// A request no front checked (the dashboard builds its own and hands it to the supervisor)
/// is checked against the command's schema before a typed command decodes it: a command
/// relies on bounds decoding alone does not hold, and out of them it must not run — a
/// negative `limit` trapped the supervisor (`prefix(-1)`), an empty `error` failed a run.
@Suite(.ownThreads, .serialized) struct UncheckedRequestTests {
    static let settings = AgentSettings(json: try! JSONValue.parse(#"""
    {"tasks": {"job": {"type": "nomodule.job"}},
     "workflows": {"flow": {"steps": [{"id": "first", "task": "job"}]}}}
    """#), file: "/nonexistent/settings.json")

    @Test func aTypedCommandRefusesWhatItsSchemaRefusesWhicheverWayTheRequestCame() throws {
        let supervisor = Supervisor.make(configuration: SupervisorConfiguration(workerPath: "/nonexistent/agent-worker", environment: [:]),
                                         processes: [], console: ConsoleOutput(json: true, showEvents: false, fd: -1),
                                         logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        supervisor.inbox.isolated {
            let work = WorkHost.Definitions(tasks: Self.settings.tasks, schedules: Self.settings.schedules, workflows: Self.settings.workflows, roles: [:])
            supervisor.work.setUp(work, agentDirectory: "/nonexistent", notifications: nil, containment: nil)
            let dashboard = CommandCenter.Caller(front: "dashboard", user: "alice")
            let cases: [(JSONValue, String)] = [
                (["command": "task_runs", "limit": -1], "/limit"),
                (["command": "workflow_runs", "limit": 0], "/limit"),
                (["command": "schedule_history", "name": "nightly", "limit": 0], "/limit"),
                (["command": "task_fail", "id": "r1", "error": ""], "/error"),
                (["command": "workflow_approve", "id": "w1", "step": "ask", "comment": .string(String(repeating: "x", count: 5000))], "/comment"),
                (["command": "task_assign", "id": "", "to": "gpu"], "/id"),
            ]
            for (request, pointer) in cases {
                var answers: [JSONValue] = []
                supervisor.execute(request, caller: dashboard) { answers.append($0) }
                for _ in 0..<3 where answers.isEmpty { supervisor.loop.runOnce(maxWait: 0) }
                #expect(answers.count == 1, "\(request): \(answers)")
                #expect(answers.first?["code"] == "invalid", "\(request): \(answers)")
                #expect(answers.first?["pointer"] == .string(pointer), "\(request): \(answers)")
            }
            // A valid one still runs.
            var answers: [JSONValue] = []
            supervisor.execute(["command": "workflow_runs", "limit": 5], caller: dashboard) { answers.append($0) }
            #expect(answers.first?["ok"] == true, "\(answers)")
        }
    }
}
