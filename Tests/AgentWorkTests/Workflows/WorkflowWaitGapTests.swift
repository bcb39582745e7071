@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// An awaited event is never lost between a `wait_event` step's start and the commit of that
/// start: the engine (the store's caller) is driven with a store whose commits are held until
/// the test lets them land, so the gap is as wide as the test wants.
@Suite(.ownThreads) struct WorkflowWaitGapTests {
    /// A store that keeps each commit's completion until ``release()``.
    final class HeldStore: WorkflowStore, @unchecked Sendable {
        private let lock = NSLock()
        private var held: [@Sendable (WorkflowCommitOutcome) -> Void] = []
        private(set) var written: [WorkflowCommit] = []

        func commit(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void) {
            lock.withLock {
                written.append(change)
                held.append(done)
            }
        }

        /// Lands every commit held so far; how many.
        @discardableResult
        func release() -> Int {
            let calls = lock.withLock {
                defer { held = [] }
                return held
            }
            for call in calls { call(.written) }
            return calls.count
        }

        var waiting: Int { lock.withLock { held.count } }
        func loadUnfinished() async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] { [] }
        func list(_ filter: WorkflowRunFilter) async throws -> RunListPage<WorkflowRun> { [] }
        func run(id: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? { nil }
        func prune(endedBefore: Double?, keeping: Int?) async throws -> Int { 0 }
    }

    @LoopActor struct Harness {
        let loop: EventLoop
        let store = HeldStore()
        let engine: WorkflowEngine

        init(on loop: EventLoop, _ source: String) throws {
            self.loop = loop
            let logger = Logger(label: "test")
            engine = WorkflowEngine(loop: loop, store: store, tasks: TaskCoordinator(loop: loop, store: nil, logger: logger), logger: logger)
            let definition = try #require(WorkflowSettings.parse(name: "waiter", source: try JSONValue.parse(Data(source.utf8))))
            engine.apply([definition])
        }

        /// Runs what the loop has (commits landed post to its inbox).
        func turn() {
            for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
        }

        /// Lands commits until the step `step` of `run` has a record whose start is in a commit
        /// held now (not landed).
        func landUntilStarted(_ run: String, _ step: String) throws {
            for _ in 0..<20 {
                if engine.known(run)?.steps.contains(where: { $0.stepID == step }) == true { return }
                store.release()
                turn()
            }
            Issue.record("step \(step) of \(run) never started")
        }

        func record(_ run: String, _ step: String) -> WorkflowStepRecord? {
            engine.known(run)?.steps.last { $0.stepID == step }
        }
    }

    static let waiter = """
        {"steps": [{"id": "paid", "wait_event": {"type": "order.paid", "where": {"required": ["order"], "properties": {"order": {"const": 7}}}, "timeout": 60}},
                   {"id": "after", "set": {"vars": {"went_on": true}}}]}
        """

    @Test func anAwaitedEventArrivingBeforeTheWaitsStartIsCommittedIsSeenOnceTheCommitLands() throws {
        let loop = EventLoop()
        try loop.isolated {
            let harness = try Harness(on: loop, Self.waiter)
            let run = harness.engine.start(try #require(harness.engine.definitions["waiter"]), input: [:], requestedBy: "test")
            try harness.landUntilStarted(run.id, "paid")
            // The wait's start is handed to the store, not committed: the step already shows waiting.
            #expect(harness.store.waiting > 0)
            #expect(harness.record(run.id, "paid")?.status == .waiting)
            // The supervisor routes to the engine only the types it wants: this one must be wanted now.
            #expect(harness.engine.wantedTypes.contains("order.paid"), "\(harness.engine.wantedTypes)")
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 8])
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 7, "first": true])
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 7, "first": false])
            harness.turn()
            // Durability: nothing goes on before the step's start is committed.
            #expect(harness.record(run.id, "paid")?.status == .waiting)
            #expect(harness.record(run.id, "after") == nil)
            for _ in 0..<20 where harness.engine.known(run.id)?.run.status.isFinished != true {
                harness.store.release()
                harness.turn()
            }
            let paid = try #require(harness.record(run.id, "paid"))
            #expect(paid.status == .succeeded, "\(paid)")
            // The first matching event is the step's output; the one that did not match is passed.
            #expect(paid.output?["payload"]?["order"] == 7 && paid.output?["payload"]?["first"] == true, "\(String(describing: paid.output))")
            #expect(harness.engine.known(run.id)?.run.status == .succeeded)
            #expect(harness.record(run.id, "after")?.status == .succeeded)
            // The step's start was written before its result.
            let paidWrites = harness.store.written.flatMap(\.steps).filter { $0.stepID == "paid" }.map(\.status)
            #expect(paidWrites == [.waiting, .succeeded], "\(paidWrites)")
            #expect(harness.engine.wantedTypes.isEmpty, "the wait is gone: \(harness.engine.wantedTypes)")
        }
    }

    @Test func anEventBeforeTheRunReachesItsWaitIsNotTakenForIt() throws {
        let loop = EventLoop()
        try loop.isolated {
            let harness = try Harness(on: loop, Self.waiter)
            let run = harness.engine.start(try #require(harness.engine.definitions["waiter"]), input: [:], requestedBy: "test")
            // The run's own start is not committed yet: its wait has not started.
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 7])
            try harness.landUntilStarted(run.id, "paid")
            for _ in 0..<5 {
                harness.store.release()
                harness.turn()
            }
            #expect(harness.record(run.id, "paid")?.status == .waiting)
            #expect(harness.engine.wantedTypes.contains("order.paid"))
            // The wait is armed after its commit as before: a later event ends it.
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 7])
            for _ in 0..<20 where harness.engine.known(run.id)?.run.status.isFinished != true {
                harness.store.release()
                harness.turn()
            }
            #expect(harness.engine.known(run.id)?.run.status == .succeeded)
        }
    }

    @Test func aRunCancelledWhileItsWaitIsBeingCommittedDropsTheBufferedEvent() throws {
        let loop = EventLoop()
        try loop.isolated {
            let harness = try Harness(on: loop, Self.waiter)
            let run = harness.engine.start(try #require(harness.engine.definitions["waiter"]), input: [:], requestedBy: "test")
            try harness.landUntilStarted(run.id, "paid")
            harness.engine.eventArrived(type: "order.paid", source: "test", time: Date().timeIntervalSince1970, payload: ["order": 7])
            _ = harness.engine.cancel(run.id, by: "test")
            for _ in 0..<5 {
                harness.store.release()
                harness.turn()
            }
            #expect(harness.engine.known(run.id)?.run.status == .cancelled)
            #expect(harness.record(run.id, "paid")?.status == .cancelled)
            #expect(harness.engine.wantedTypes.isEmpty, "\(harness.engine.wantedTypes)")
        }
    }
}
