@testable import AgentBase
@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The coordinator with declared executors (``ExecutorPool``): runs go only to an executor with
/// room, drains, manual assignment, a lost executor's run retried elsewhere, people's runs.
/// Driven on a real event loop with a recording runner (these tests are about its caller).
@Suite(.ownThreads) struct ExecutorDispatchTests {
    let loop = EventLoop()
    let runner = RecordingRunner()

    @LoopActor func coordinator(_ tasks: [TaskDefinition], executors: [ExecutorDefinition], strategy: AssignmentStrategy = .bestFit,
                     events: LockedEvents? = nil) -> TaskCoordinator {
        let coordinator = TaskCoordinator(loop: loop, store: nil, logger: Logger(label: "test"))
        coordinator.register(runner, for: "command")
        coordinator.personRunner = PersonTaskRunner()
        if let events { coordinator.publish = { event, payload, _ in events.append(event.type, event.payload(payload)) } }
        var assignment = AssignmentSettings()
        assignment.strategy = strategy
        coordinator.configureExecutors(executors, assignment: assignment)
        coordinator.apply(tasks)
        return coordinator
    }

    final class LockedEvents {
        var list: [(type: String, payload: JSONValue)] = []
        func append(_ type: String, _ payload: JSONValue) { list.append((type, payload)) }
        func of(_ type: String) -> [JSONValue] { list.filter { $0.type == type }.map(\.payload) }
    }

    /// A command's answer as the fronts send it: its JSON, or its refusal's.
    static func json<Answer: Encodable>(_ result: Result<Answer, CommandError>) -> JSONValue {
        switch result {
        case .success(let answer): (try? JSONValueEncoder().encode(answer)) ?? .null
        case .failure(let refusal): refusal.json
        }
    }

    static func json<Answer: Encodable>(_ answer: Answer) -> JSONValue { json(Result<Answer, CommandError>.success(answer)) }

    /// A person's answer as the fronts send it (without a store it is answered at once).
    @LoopActor static func finished(_ tasks: TaskCoordinator, _ id: String, _ answer: TaskCoordinator.PersonOutcome, caller: CommandCaller) -> JSONValue {
        var result: Result<TaskRunAnswer, CommandError>?
        tasks.personFinished(id, answer, caller: caller) { result = $0 }
        return result.map(json) ?? .null
    }

    static func task(_ name: String, concurrent: Int = 100, retries: TaskDefinition.RetryPolicy = .init(), require: [String: String] = [:]) -> TaskDefinition {
        var task = TaskDefinition(name: name, type: "command", retries: retries, maxConcurrent: concurrent, command: .init(arguments: ["/bin/true"]))
        task.require = require
        return task
    }

    static func executor(_ name: String, tasks: [String] = ["t"], max: Int = 2, labels: [String: String] = [:], user: String? = nil) -> ExecutorDefinition {
        ExecutorDefinition(name: name, tasks: Dictionary(uniqueKeysWithValues: tasks.map { ($0, ExecutorDefinition.Capability()) }),
                           maxConcurrent: max, labels: labels, user: user)
    }

    func spin(timeout: Double = 10, until condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(timeout)
        while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
    }

    @LoopActor func submit(_ tasks: TaskCoordinator, _ task: String = "t", count: Int = 1) -> [TaskRun] {
        (0..<count).map { _ in tasks.submit(task: task, input: [:], priority: .normal, notBefore: nil, requestedBy: .cli) }
    }

    @Test func runsGoOnlyToExecutorsWithRoomAndTheRestWait() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")], executors: [Self.executor("a", max: 2), Self.executor("b", max: 1)], strategy: .roundRobin)
            let runs = submit(tasks, count: 5)
            #expect(runner.started.count == 3, "a takes 2, b takes 1; the other two wait queued")
            #expect(Dictionary(grouping: runner.started, by: { $0.executor ?? "-" }).mapValues(\.count) == ["a": 2, "b": 1])
            #expect(tasks.knownRun(runs[4].id)?.status == .queued)
            runner.finish(runner.started[1].runID, TaskRunOutcome(status: .succeeded))
            #expect(runner.started.count == 4, "a slot freed: the next run goes")
            #expect(tasks.knownRun(runner.started[0].runID)?.executor == runner.started[0].executor)
        }
    }

    @Test func aDrainedExecutorFinishesWhatItHasAndTakesNothingNew() {
        loop.isolated {
            let events = LockedEvents()
            let tasks = coordinator([Self.task("t")], executors: [Self.executor("a", max: 1), Self.executor("b", max: 1)], events: events)
            let first = submit(tasks, count: 2)
            let onA = runner.started.first { $0.executor == "a" }!
            #expect(Self.json(tasks.setDraining("a", true))["ok"] == true)
            #expect(Self.json(tasks.listExecutors())["executors"]?.arrayValue?.first?["state"] == "draining")
            runner.finish(onA.runID, TaskRunOutcome(status: .succeeded))
            #expect(tasks.knownRun(onA.runID)?.status == .succeeded, "its run finished")
            _ = submit(tasks, count: 1)
            #expect(runner.started.count == 2, "a is drained and b is full: the new run waits")
            _ = tasks.setDraining("a", false)
            #expect(runner.started.count == 3 && runner.started[2].executor == "a", "resumed: a takes it")
            #expect(events.of("executor.draining").count == 1)
            #expect(first.count == 2)
        }
    }

    @Test func aRunAssignedByHandWaitsForThatExecutor() {
        loop.isolated {
            let events = LockedEvents()
            let tasks = coordinator([Self.task("t")], executors: [Self.executor("a", max: 1), Self.executor("b", max: 1)], events: events)
            let runs = submit(tasks, count: 3)
            let queued = runs[2]
            let onB = runner.started.first { $0.executor == "b" }!
            #expect(Self.json(tasks.assign(queued.id, to: "b"))["ok"] == true)
            #expect(Self.json(tasks.assign(queued.id, to: "nope"))["code"] == "not_found")
            #expect(Self.json(tasks.assign(onB.runID, to: "a"))["code"] == "conflict", "a running run cannot be reassigned")
            // a frees first, but the run waits for b.
            runner.finish(runner.started.first { $0.executor == "a" }!.runID, TaskRunOutcome(status: .succeeded))
            #expect(runner.started.count == 2)
            runner.finish(onB.runID, TaskRunOutcome(status: .succeeded))
            #expect(runner.started.count == 3 && runner.started[2].runID == queued.id && runner.started[2].executor == "b")
            #expect(events.of("task.assigned").last?["strategy"] == "manual")
        }
    }

    @Test func aLostExecutorsRunIsRetriedOnAnotherOneWithTheSameRunID() {
        loop.isolated {
            let events = LockedEvents()
            let tasks = coordinator([Self.task("t", retries: .init(max: 0, initialDelay: 0.01))],
                                    executors: [Self.executor("a", max: 1), Self.executor("b", max: 1)], events: events)
            let run = submit(tasks)[0]
            let first = runner.started[0]
            var lost = TaskRunOutcome(status: .failed, error: "the task's executor worker was killed by SIGKILL during the run")
            lost.executorLost = true
            runner.finish(run.id, lost)
            #expect(tasks.knownRun(run.id)?.status == .retrying, "retried though its task allows no retries: not the work's fault")
            #expect(tasks.knownRun(run.id)?.interruptions == 1, "counted as an interruption, not against the policy")
            spin { runner.started.count == 2 }
            let second = runner.started[1]
            #expect(second.runID == first.runID && second.attempt == 2)
            #expect(second.executor != first.executor, "on the other executor")
            #expect(events.of("task.reassigned").first?["from"]?.stringValue == first.executor)
            let states = Self.json(tasks.listExecutors())["executors"]?.arrayValue?.map { ($0["name"]?.stringValue ?? "", $0["state"]?.stringValue ?? "") }
            #expect(states?.first { $0.0 == first.executor }?.1 == "offline")
            runner.finish(run.id, TaskRunOutcome(status: .succeeded))
            #expect(tasks.knownRun(run.id)?.status == .succeeded)
        }
    }

    /// Every executor lost a run of it and went offline: the run waits, and starts when one
    /// comes back online — not when some other request next looks at the queue (with none,
    /// never: a quiet agent kept it `retrying` for good).
    @Test func aRunWhoseExecutorsAreAllOfflineStartsWhenOneComesBackWithNoOtherRequest() {
        loop.isolated {
            let tasks = coordinator([Self.task("t", retries: .init(max: 0, initialDelay: 0))],
                                    executors: [Self.executor("a", max: 1), Self.executor("b", max: 1)])
            let run = submit(tasks)[0]
            for attempt in 1...2 {
                spin { runner.started.count == attempt }
                #expect(runner.started.count == attempt, "attempt \(attempt) did not start")
                var lost = TaskRunOutcome(status: .failed, error: "the task's executor worker was killed by SIGKILL during the run")
                lost.executorLost = true
                runner.finish(run.id, lost)
            }
            let states = Self.json(tasks.listExecutors())["executors"]?.arrayValue?.map { $0["state"]?.stringValue ?? "" }
            #expect(states == ["offline", "offline"], "\(String(describing: states))")
            #expect(tasks.knownRun(run.id)?.status == .retrying)
            // Offline for 1 s each: the third attempt starts once one is back, nothing else asked.
            spin(timeout: 30) { runner.started.count == 3 }
            #expect(runner.started.count == 3, "the run waits though an executor is back online")
            runner.finish(run.id, TaskRunOutcome(status: .succeeded))
            #expect(tasks.knownRun(run.id)?.status == .succeeded)
        }
    }

    @Test func aRunRequiringLabelsGoesToAnExecutorCarryingThemWithoutHoldingUpTheOthers() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")], executors: [Self.executor("cpu", max: 2), Self.executor("gpu", max: 1, labels: ["gpu": "yes"])],
                                    strategy: .loadBalanced)
            var gpu = tasks.prepare(task: "t", input: [:], priority: .high, requestedBy: .cli)
            gpu.require = ["gpu": "yes"]
            _ = tasks.submit(gpu)
            var second = tasks.prepare(task: "t", input: [:], priority: .high, requestedBy: .cli)
            second.require = ["gpu": "yes"]
            _ = tasks.submit(second)
            _ = submit(tasks, count: 2)
            #expect(runner.started.first { $0.runID == gpu.id }?.executor == "gpu")
            #expect(runner.started.filter { $0.executor == "cpu" }.count == 2, "the gpu run waiting for room does not block the others")
            #expect(tasks.knownRun(second.id)?.status == .queued)
            #expect(tasks.requirementProblem(task: "t", ["gpu": "no"]) != nil)
        }
    }

    @Test func aPersonCompletesTheirRunWithAnOutputCheckedAgainstTheOutputSchema() {
        loop.isolated {
            var review = Self.task("review")
            review.type = "command"
            review.outputSchema = ["type": "object", "required": ["approved"], "properties": ["approved": ["type": "boolean"]]]
            let tasks = coordinator([review], executors: [Self.executor("alice", tasks: ["review"], max: 5, user: "alice")])
            let run = submit(tasks, "review")[0]
            #expect(runner.started.isEmpty, "a person's run is not given to the command runner")
            #expect(tasks.knownRun(run.id)?.status == .running)
            #expect(tasks.assignments(executor: nil, user: "alice").map { $0["id"] } == [.string(run.id)])
            let bob = CommandCaller(front: "http", user: "bob")
            #expect(Self.finished(tasks, run.id, .completed(["approved": true]), caller: bob)["code"] == "forbidden")
            let alice = CommandCaller(front: "dashboard", user: "alice")
            let refused = Self.finished(tasks, run.id, .completed(["approved": "yes"]), caller: alice)
            #expect(refused["pointer"] == "/output/approved")
            let done = Self.finished(tasks, run.id, .completed(["approved": true]), caller: alice)
            #expect(done["run"]?["status"] == "succeeded")
            #expect(tasks.knownRun(run.id)?.output == ["approved": true])
        }
    }

    /// A person's run whose large input is held as its text: `task_assignments` shows the input
    /// whole, read into a value off the loop (the answer comes by the loop's inbox).
    @Test func assignmentsShowALargeInputHeldAsTextWhole() throws {
        let large = RunInputHeldTests.input(kib: 40)
        let request = try RunInputHeldTests.request("review", large)
        try loop.isolated {
            let tasks = coordinator([Self.task("review")], executors: [Self.executor("alice", tasks: ["review"], max: 5, user: "alice")])
            var queued: Result<TaskRunAnswer, CommandError>?
            tasks.runTask(request, origin: .http) { queued = $0 }
            let id = try #require(try queued?.get().run["id"]?.stringValue)
            #expect(tasks.knownRun(id)?.held.isTextOnly == true)
            var answer: Result<TaskAssignmentsCommand.Answer, CommandError>?
            TaskAssignmentsCommand.run(.init(user: "alice"), on: tasks, caller: CommandCaller(front: "control", user: nil)) { answer = $0 }
            spin { answer != nil }
            let runs = try #require(try answer?.get().runs)
            let whole = runs.count == 1 && runs[0]["id"] == .string(id) && runs[0]["input"] == large
            #expect(whole)
        }
    }

    /// An executor naming a role: its runs wait for any user of that role, each sees them in
    /// their list, one of them completes a run; a user of another role may not.
    @Test func aRoleExecutorsRunIsCompletedByAnyUserOfThatRoleOnly() {
        loop.isolated {
            let reviewers = ExecutorDefinition(name: "reviewers", tasks: ["review": .init()], maxConcurrent: 5, role: "admin", people: ["alice", "carol"])
            let tasks = coordinator([Self.task("review")], executors: [reviewers])
            let runs = submit(tasks, "review", count: 2)
            #expect(runner.started.isEmpty, "a role's run is not given to the command runner")
            #expect(runs.allSatisfy { tasks.knownRun($0.id)?.status == .running })
            for user in ["alice", "carol"] {
                #expect(tasks.assignments(executor: nil, user: user).count == 2, "\(user)")
            }
            #expect(tasks.assignments(executor: nil, user: "bob").isEmpty == true)
            let bob = CommandCaller(front: "http", user: "bob")
            let refused = Self.finished(tasks, runs[0].id, .completed([:]), caller: bob)
            #expect(refused["code"] == "forbidden")
            #expect(refused["error"]?.stringValue?.contains(#"a user with the role "admin" (alice, carol)"#) == true, "\(String(describing: refused))")
            let carol = CommandCaller(front: "dashboard", user: "carol")
            #expect(Self.finished(tasks, runs[0].id, .completed(["ok": true]), caller: carol)["run"]?["status"] == "succeeded")
            let alice = CommandCaller(front: "http", user: "alice")
            let failed = Self.finished(tasks, runs[1].id, .failed("not today"), caller: alice)
            #expect(failed["run"]?["status"] == "failed")
            #expect(tasks.knownRun(runs[1].id)?.error == "alice: not today")
            #expect(tasks.describe(0)["people"] == ["alice", "carol"])
        }
    }

    /// Runs assigned by hand have no bound but the queue's: the answer stops at 4 MiB of JSON
    /// with its oldest runs, whole, and says so.
    @Test func assignmentsStopAtFourMiBWithTheOldestRunsWhole() {
        loop.isolated {
            let tasks = coordinator([Self.task("t")], executors: [Self.executor("a", max: 1), Self.executor("b", max: 1)])
            let first = submit(tasks, count: 2)
            let big: JSONValue = ["text": .string(String(repeating: "x", count: 500_000))]
            let queued = (0..<12).map { _ in tasks.submit(task: "t", input: big, priority: .normal, notBefore: nil, requestedBy: .cli) }
            for run in queued { #expect(Self.json(tasks.assign(run.id, to: "b"))["ok"] == true) }
            var answer: JSONValue = .null
            TaskAssignmentsCommand.run(.init(), on: tasks, caller: CommandCaller(front: "test")) { answer = Self.json($0) }
            let runs = answer["runs"]?.arrayValue ?? []
            #expect(answer["truncated"] == true)
            #expect(answer["note"]?.stringValue?.contains("4 MiB") == true)
            #expect(answer.serialized().utf8.count <= RunListing.answerLimit + 1_000)
            #expect(runs.count >= 8 && runs.count < 14, "\(runs.count)")
            #expect(runs.last?["input"] == big, "whole: a person needs the input")
            let oldestFirst = (first + queued).map { JSONValue.string($0.id) }
            #expect(runs.map { $0["id"] ?? .null } == Array(oldestFirst.prefix(runs.count)), "the oldest runs, in order")
            // One executor's runs that fit: the answer says nothing more.
            var small: JSONValue = .null
            TaskAssignmentsCommand.run(.init(executor: "a"), on: tasks, caller: CommandCaller(front: "test")) { small = Self.json($0) }
            #expect(small["runs"]?.arrayValue?.count == 1)
            #expect(small["truncated"] == nil)
            #expect(small["note"] == nil)
        }
    }
}
