@testable import AgentBase
@testable import AgentCommands
@testable import AgentSupervision
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// A command runs only on a request the registry checked (``CheckedRequest``, made only by
/// ``CommandRegistry/check(_:)``), once, whichever front it came from: a command relies on
/// bounds decoding alone does not hold, and out of them it must not run — a negative `limit`
/// trapped the supervisor (`prefix(-1)`), an empty `error` failed a run.
@Suite(.ownThreads, .serialized) struct CheckedRequestTests {
    static let settings = AgentSettings(json: try! JSONValue.parse(#"""
    {"tasks": {"job": {"type": "nomodule.job"}},
     "workflows": {"flow": {"steps": [{"id": "first", "task": "job"}]}}}
    """#), file: "/nonexistent/settings.json")

    static func supervisor() -> Supervisor {
        let supervisor = Supervisor.make(configuration: SupervisorConfiguration(workerPath: "/nonexistent/agent-worker", environment: [:]),
                                         processes: [], console: ConsoleOutput(json: true, showEvents: false, fd: -1),
                                         logger: Logger(label: "test") { _ in SwiftLogNoOpLogHandler() })
        supervisor.inbox.isolated {
            let work = WorkHost.Definitions(tasks: settings.tasks, schedules: settings.schedules, workflows: settings.workflows, roles: [:])
            supervisor.work.setUp(work, agentDirectory: "/nonexistent", notifications: nil, containment: nil)
        }
        return supervisor
    }

    @Test func aTypedCommandRunsOnlyWhatItsSchemaAllows() throws {
        let supervisor = Self.supervisor()
        let dashboard = CommandCenter.Caller(front: "dashboard", user: "alice")
        let cases: [(JSONValue, String)] = [
            (["command": "task_runs", "limit": -1], "/limit"),
            (["command": "workflow_runs", "limit": 0], "/limit"),
            (["command": "schedule_history", "name": "nightly", "limit": 0], "/limit"),
            (["command": "task_fail", "id": "r1", "error": ""], "/error"),
            (["command": "workflow_approve", "id": "w1", "step": "ask", "comment": .string(String(repeating: "x", count: 5000))], "/comment"),
            (["command": "task_assign", "id": "", "to": "gpu"], "/id"),
            (["command": "task_fail", "id": "r1", "error": .string(String(repeating: "x", count: 65_537))], "/error"),
        ]
        for (request, pointer) in cases {
            guard case .failure(let refusal) = CommandRegistry.standard.check(request) else {
                Issue.record("\(request) passed the check")
                continue
            }
            #expect(refusal.code == .invalid, "\(request): \(refusal)")
            #expect(refusal.pointer == pointer, "\(request): \(refusal)")
        }
        // A valid one runs.
        guard case .success(let checked) = CommandRegistry.standard.check(["command": "workflow_runs", "limit": 5]) else {
            Issue.record("a valid request was refused")
            return
        }
        let answers = supervisor.inbox.isolated {
            var answers: [JSONValue] = []
            supervisor.execute(checked, caller: dashboard) { answers.append($0) }
            // A list is made off the loop, then answered on it.
            let deadline = Date().addingTimeInterval(60)
            while answers.isEmpty, Date() < deadline { supervisor.loop.runOnce(maxWait: 0.1) }
            return answers
        }
        #expect(answers.first?["ok"] == true, "\(answers)")
    }

    /// A run's input and a person's output are bounded (1 MiB of JSON) wherever a request
    /// would make or complete a run; a run taken before the bound is not run again.
    @Test func noRequestMakesOrCompletesARunOverOneMiB() throws {
        let big: JSONValue = ["items": .array(Array(repeating: .string(String(repeating: "x", count: 1000)), count: 1100))]
        let cases: [(JSONValue, String)] = [
            (["command": "task_run", "name": "job", "input": big], "/input"),
            (["command": "workflow_run", "name": "flow", "input": big], "/input"),
            (["command": "task_complete", "id": "r1", "output": big], "/output"),
        ]
        for (request, pointer) in cases {
            guard case .failure(let refusal) = CommandRegistry.standard.check(request) else {
                Issue.record("\(request["command"] ?? nil) passed the check")
                continue
            }
            #expect(refusal.code == .tooLarge, "\(refusal)")
            #expect(refusal.pointer == pointer, "\(refusal)")
            #expect(refusal.message.contains("more than 1048576 bytes of JSON"), "\(refusal)")
        }
        let supervisor = Self.supervisor()
        let answers = supervisor.inbox.isolated {
            // A run as one taken before the bound: made without the request's check.
            let old = supervisor.work.tasks!.submit(task: "job", input: big, priority: .normal, notBefore: nil, requestedBy: .cli)
            guard case .success(let checked) = CommandRegistry.standard.check(["command": "task_rerun", "id": .string(old.id)]) else { return [JSONValue]() }
            var answers: [JSONValue] = []
            supervisor.execute(checked, caller: CommandCenter.Caller(front: "control")) { answers.append($0) }
            for _ in 0..<3 where answers.isEmpty { supervisor.loop.runOnce(maxWait: 0) }
            return answers
        }
        #expect(answers.first?["code"] == "too_large", "\(answers)")
        #expect(answers.first?["error"]?.stringValue?.contains("taken before runs were bounded") == true, "\(answers)")
    }

    /// The dashboard's and the other in-process requests (`/metrics`, `/readyz`, a stream's
    /// next page) are checked like the API's, store reads and snapshots too: a `history` with
    /// a `limit` of 0 was read with a limit of 1.
    @Test func aRequestBuiltInProcessIsCheckedLikeTheAPIs() async throws {
        let supervisor = Self.supervisor()
        let center = supervisor.inbox.isolated { supervisor.makeCommandCenter(storePath: nil) }
        let answer = await center.execute(["command": "history", "limit": 0], caller: CommandCenter.Caller(front: "dashboard"))
        #expect(answer["code"] == "invalid", "\(answer)")
        #expect(answer["pointer"] == "/limit", "\(answer)")
        let unknown = await center.execute(["command": "events", "colour": "red"], caller: CommandCenter.Caller(front: "dashboard"))
        #expect(unknown["pointer"] == "/colour", "\(unknown)")
    }
}
