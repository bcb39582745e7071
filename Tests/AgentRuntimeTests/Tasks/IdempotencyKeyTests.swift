@testable import AgentLoop
@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import GRDB
import JSONSchema
import Logging
import Testing
@testable import AgentRuntime

/// The idempotency key a run's work sees: a command's `AGENT_TASK_IDEMPOTENCY_KEY`, a module
/// handler's `TaskContext.idempotencyKey`; the run id unless the requester gave one; the same
/// for every attempt of the run; kept by the store.
@Suite(.ownThreads, .serialized) struct IdempotencyKeyTests {
    /// A coordinator on a loop of the test's own with the real command runner.
    @LoopActor final class Commands {
        let loop: EventLoop
        let directory = TestPaths.temporaryDirectory("idempotency")
        let coordinator: TaskCoordinator

        init(on loop: EventLoop, _ tasks: [TaskDefinition]) {
            self.loop = loop
            coordinator = TaskCoordinator(loop: loop, store: nil, logger: Logger(label: "test"))
            coordinator.register(CommandTaskRunner(loop: loop, agentDirectory: directory, environment: ["PATH": "/usr/bin:/bin"],
                                                   containment: nil, logger: Logger(label: "test")), for: "command")
            coordinator.apply(tasks)
        }

        deinit { try? FileManager.default.removeItem(atPath: directory) }

        func wait(_ id: String, timeout: Double = 30) -> TaskRun? {
            let deadline = EventLoop.now() + timeout
            while coordinator.knownRun(id)?.status.isFinished != true, EventLoop.now() < deadline { loop.runOnce(maxWait: 0.05) }
            return coordinator.knownRun(id)
        }
    }

    /// Appends `<attempt> <key>` to keys.txt; fails its first attempt.
    static let flaky = TaskDefinition(
        name: "flaky", type: "command", retries: .init(max: 2, initialDelay: 0.01, multiplier: 1, maxDelay: 0.01),
        command: .init(arguments: [#"echo "$AGENT_TASK_ATTEMPT $AGENT_TASK_IDEMPOTENCY_KEY" >> keys.txt; [ "$AGENT_TASK_ATTEMPT" -gt 1 ]"#], shell: true))

    @Test func aCommandSeesTheKeyItsRequesterGaveAndARetriedAttemptKeepsIt() throws {
        let loop = EventLoop()
        try loop.isolated {
            let commands = Commands(on: loop, [Self.flaky])
            var run = commands.coordinator.prepare(task: "flaky", input: [:], priority: .normal, requestedBy: .workflow)
            run.idempotencyKey = "wf-1/charge/1"
            commands.coordinator.submit(run)
            let ended = try #require(commands.wait(run.id))
            #expect(ended.status == .succeeded, "\(ended)")
            #expect(ended.attempt == 2)
            let lines = try String(contentsOfFile: commands.directory + "/keys.txt", encoding: .utf8).split(separator: "\n")
            #expect(lines == ["1 wf-1/charge/1", "2 wf-1/charge/1"])
            #expect(ended.json["idempotency_key"] == "wf-1/charge/1")
        }
    }

    @Test func withoutAKeyGivenACommandSeesItsRunID() throws {
        let loop = EventLoop()
        try loop.isolated {
            let commands = Commands(on: loop, [Self.flaky])
            let run = commands.coordinator.submit(task: "flaky", input: [:], priority: .normal, notBefore: nil, requestedBy: .cli)
            #expect(commands.wait(run.id)?.status == .succeeded)
            let lines = try String(contentsOfFile: commands.directory + "/keys.txt", encoding: .utf8).split(separator: "\n")
            #expect(lines == ["1 \(run.id)", "2 \(run.id)"])
        }
    }

    @Test func aModuleHandlerSeesTheKeyInItsContextOnEveryAttempt() throws {
        let harness = ModuleTaskRunnerTests.Harness()
        defer { harness.stop() }
        for attempt in 1...2 {
            let id = "k\(attempt)"
            harness.supervisor.inbox.isolated {
                harness.runner.start(TaskRunStart(runID: "run-7", idempotencyKey: "wf-9/step/1", attempt: attempt, task: ModuleTaskRunnerTests.faulty,
                                                  input: ["mode": "ok"])) { report in harness.reports[id, default: []].append(report) }
            }
            let outcome = try #require(harness.wait(id), "\(harness.log.lines)")
            #expect(outcome.output?["idempotencyKey"] == "wf-9/step/1", "\(outcome)")
            #expect(outcome.output?["runID"] == "run-7")
            #expect(outcome.output?["attempt"] == .number(JSONNumber(attempt)))
        }
        // Without a key given: the run id.
        harness.start("plain", task: ModuleTaskRunnerTests.faulty, input: ["mode": "ok"])
        #expect(harness.wait("plain")?.output?["idempotencyKey"] == "plain")
    }

    @Test func theStoreKeepsTheKeyAndOldRecordsReadTheirRunID() async throws {
        let folder = TestPaths.temporaryDirectory("idempotency")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        var keyed = TaskRun(id: "a", task: "t", input: .object([:]), priority: .normal, requestedBy: .cli)
        keyed.idempotencyKey = "wf/step/2"
        runs.record(keyed)
        runs.record(TaskRun(id: "b", task: "t", input: .object([:]), priority: .normal, requestedBy: .cli))
        await runs.flush()
        #expect(try await runs.run(id: "a")?.idempotencyKey == "wf/step/2")
        #expect(try await runs.run(id: "b")?.idempotencyKey == "b")
        let column = try store.withWriter { db in try String.fetchOne(db, sql: "SELECT idempotency_key FROM task_runs WHERE id = 'a'") }
        #expect(column == "wf/step/2")
    }
}
