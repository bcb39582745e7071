import AgentBase
@testable import AgentLoop
@testable import AgentStore
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A run a request asks for starts beside its write, not after it, and the request is answered
/// once the write is done; a write that fails cancels the run it started, and while the store
/// is known not to write, a request starts nothing. The coordinator with a real SQLite store;
/// its runner only records (these tests are about the coordinator, the runner's caller).
@Suite(.ownThreads, .serialized) struct RequestedRunStartTests {
    /// Holds every run it is given until it is cancelled.
    @LoopActor final class HoldingRunner: @LoopActor TaskRunner {
        var started: [String] = []
        var cancelled: [String] = []
        private var reports: [String: (TaskRunReport) -> Void] = [:]

        nonisolated init() {}

        func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
            started.append(run.runID)
            reports[run.runID] = report
        }

        func cancel(runID: String, reason: TaskRunOutcome.Status) {
            cancelled.append(runID)
            reports.removeValue(forKey: runID)?(.finished(TaskRunOutcome(status: reason)))
        }

        func shutDown() {
            for report in reports.values { report(.finished(TaskRunOutcome(status: .interrupted))) }
            reports = [:]
        }
    }

    let loop = EventLoop()
    let runner = HoldingRunner()

    @LoopActor func coordinator(_ store: SQLiteRunStore) -> TaskCoordinator {
        let coordinator = TaskCoordinator(loop: loop, store: store, logger: Logger(label: "test"))
        coordinator.register(runner, for: "command")
        coordinator.apply([TaskDefinition(name: "t", type: "command", maxConcurrent: 1_000, command: .init(arguments: ["/bin/true"]))])
        return coordinator
    }

    /// Asks for a run of `t` and runs the loop until the request is answered (at most 60 s).
    @LoopActor func request(_ tasks: TaskCoordinator, input: JSONValue = [:]) -> Result<TaskRunAnswer, CommandError>? {
        var answer: Result<TaskRunAnswer, CommandError>?
        tasks.runTask(TaskRunCommand.Request(name: "t", input: input), origin: .cli) { answer = $0 }
        let deadline = Date(timeIntervalSinceNow: 60)
        while answer == nil, Date() < deadline { loop.runOnce(maxWait: 0.01) }
        return answer
    }

    @Test func aRequestedRunStartsBeforeItsWriteIsDoneAndIsAnsweredOnceItIsWritten() throws {
        let folder = TestPaths.temporaryDirectory("requested-run-start")
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let store = try AgentStore(path: folder + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { store.close() }
        let runs = try SQLiteRunStore(store: store)
        try loop.isolated {
            let tasks = coordinator(runs)
            var answer: Result<TaskRunAnswer, CommandError>?
            tasks.runTask(TaskRunCommand.Request(name: "t"), origin: .cli) { answer = $0 }
            // The write's answer comes through the loop, which has not turned yet: the run has
            // started and the request is not answered.
            #expect(runner.started.count == 1, "the run waits for its write")
            #expect(answer == nil)
            let deadline = Date(timeIntervalSinceNow: 60)
            while answer == nil, Date() < deadline { loop.runOnce(maxWait: 0.01) }
            let id = try #require(try answer?.get().run["id"]?.stringValue)
            #expect(id == runner.started.first)
            // Answered: it is in the store, read on a connection of its own.
            #expect(try SQLiteRunStore.readRun(id: id, reader: AgentStore.readOnlyQueue(path: store.path))?.status == .running)
        }
    }

    @Test(.enabled(if: TmpfsDisk.canMount, "mounting a tmpfs needs root"))
    func aRunWhoseWriteFailsIsCancelledAndWhileTheStoreCannotWriteARequestStartsNothing() throws {
        let disk = try TmpfsDisk(size: "8m", name: "requested-run-start")
        defer { disk.unmount() }
        let store = try AgentStore(path: disk.path + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        let runs = try SQLiteRunStore(store: store)
        var acknowledged: [String] = []
        var cancelledID = ""
        #expect(disk.fill() > 0)
        try loop.isolated {
            let tasks = coordinator(runs)
            // Runs are written until the store cannot write; the first refused had started.
            let pad = JSONValue.string(String(repeating: "x", count: 32 << 10))
            var refusal: CommandError?
            for _ in 0..<400 where refusal == nil {
                switch try #require(request(tasks, input: ["pad": pad]), "a request was not answered") {
                case .success(let answer): acknowledged.append(try #require(answer.run["id"]?.stringValue))
                case .failure(let error): refusal = error
                }
            }
            let refused = try #require(refusal, "the store never refused a run on a full disk")
            #expect(refused.message.contains("the store cannot write now, so the run of task \"t\" was not queued (it had started as"), "\(refused.message)")
            cancelledID = try #require(runner.started.last)
            #expect(!acknowledged.contains(cancelledID))
            #expect(refused.message.contains("\(cancelledID), now cancelled"), "\(refused.message)")
            #expect(runner.cancelled == [cancelledID])
            #expect(tasks.knownRun(cancelledID)?.status == .cancelled)

            // The store is known not to write now: a request waits for the write, is refused,
            // and starts nothing.
            #expect(!runs.writesNow)
            let startedBefore = runner.started.count
            guard case .failure(let error) = try #require(request(tasks)) else {
                Issue.record("a request was answered while the store cannot write")
                return
            }
            #expect(error.message.contains("the store cannot write now, so the run of task \"t\" was not queued"), "\(error.message)")
            #expect(!error.message.contains("it had started"))
            #expect(runner.started.count == startedBefore, "a run started while the store was known not to write")
        }

        // Room again: what was kept is written — the acknowledged runs, and the cancelled one as
        // cancelled.
        try disk.free()
        #expect(WorkflowAgent.wait(timeout: 60) { store.statistics.retained == 0 && store.statistics.degraded == nil }, "\(store.statistics)")
        store.close()
        let reopened = try AgentStore(path: disk.path + "/agent.sqlite", settings: StoreSettings(), logger: Logger(label: "test"))
        defer { reopened.close() }
        let reader = try AgentStore.readOnlyQueue(path: reopened.path)
        for id in acknowledged { #expect(try SQLiteRunStore.readRun(id: id, reader: reader) != nil, "acknowledged run \(id) is gone") }
        #expect(try SQLiteRunStore.readRun(id: cancelledID, reader: reader)?.status == .cancelled)
    }
}
