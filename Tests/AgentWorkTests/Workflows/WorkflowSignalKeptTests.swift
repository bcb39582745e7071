import AgentBase
@testable import AgentLoop
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A signal is answered "taken" only when its change is written or kept where a kill does not
/// lose it: the engine (the store's caller) is driven with a store whose commits land with the
/// outcome the test gives. On a full disk with the journal's room spent, an adversary's signals
/// were answered taken and lost by a kill.
@Suite(.ownThreads) struct WorkflowSignalKeptTests {
    /// A store that keeps each commit's completion until ``land(_:)``.
    final class OutcomeStore: WorkflowStore, @unchecked Sendable {
        private let lock = NSLock()
        private var held: [@Sendable (WorkflowCommitOutcome) -> Void] = []
        private var keeps = true

        func commit(_ change: WorkflowCommit, done: @escaping @Sendable (WorkflowCommitOutcome) -> Void) {
            lock.withLock { held.append(done) }
        }

        var keepsChangesNow: Bool {
            get { lock.withLock { keeps } }
            set { lock.withLock { keeps = newValue } }
        }

        /// Lands every commit held so far with `outcome`.
        func land(_ outcome: WorkflowCommitOutcome) {
            let calls = lock.withLock {
                defer { held = [] }
                return held
            }
            for call in calls { call(outcome) }
        }

        var waiting: Int { lock.withLock { held.count } }
        func loadUnfinished() async throws -> [(run: WorkflowRun, steps: [WorkflowStepRecord])] { [] }
        func list(_ filter: WorkflowRunFilter) async throws -> RunListPage<WorkflowRun> { [] }
        func run(id: String) async throws -> (run: WorkflowRun, steps: [WorkflowStepRecord])? { nil }
        func prune(endedBefore: Double?, keeping: Int?) async throws -> Int { 0 }
    }

    static let gate = #"{"steps": [{"id": "wait", "wait_signal": {"name": "go"}}, {"id": "after", "set": {"vars": {"went_on": true}}}]}"#

    /// An engine that knows `gate`, with a store whose commits land as the test says.
    @LoopActor static func engine(on loop: EventLoop) throws -> (WorkflowEngine, OutcomeStore) {
        let logger = Logger(label: "test")
        let store = OutcomeStore()
        let engine = WorkflowEngine(loop: loop, store: store, tasks: TaskCoordinator(loop: loop, store: nil, logger: logger), logger: logger)
        engine.apply([try #require(WorkflowSettings.parse(name: "gate", source: try JSONValue.parse(Data(gate.utf8))))])
        return (engine, store)
    }

    /// A run of `gate` waiting at its signal, its commits landed.
    @LoopActor static func waitingRun(_ engine: WorkflowEngine, _ store: OutcomeStore, on loop: EventLoop) throws -> String {
        let run = engine.start(try #require(engine.definitions["gate"]), input: [:], requestedBy: "test")
        for _ in 0..<20 where engine.known(run.id)?.steps.first?.status != .waiting || store.waiting > 0 {
            store.land(.written)
            for _ in 0..<5 { loop.runOnce(maxWait: 0.01) }
        }
        #expect(engine.known(run.id)?.steps.first?.status == .waiting)
        return run.id
    }

    /// Sends the signal and lands its commits with `outcome`; the answer.
    @LoopActor static func signal(_ id: String, _ engine: WorkflowEngine, _ store: OutcomeStore, on loop: EventLoop,
                                  landing outcome: WorkflowCommitOutcome) -> Result<WorkflowSignalCommand.Answer, CommandError>? {
        var answer: Result<WorkflowSignalCommand.Answer, CommandError>?
        engine.signal(.init(id: id, name: "go"), by: "test") { answer = $0 }
        // The payload is checked off the loop; its answer comes back to the loop's inbox.
        let deadline = Date().addingTimeInterval(60)
        while answer == nil, Date() < deadline {
            store.land(outcome)
            loop.runOnce(maxWait: 0.05)
        }
        return answer
    }

    @Test func aSignalIsAnsweredTakenOnlyWhenItsChangeIsWrittenOrKept() throws {
        let loop = EventLoop()
        try loop.isolated {
            let (engine, store) = try Self.engine(on: loop)

            // Kept in the journal: taken.
            let kept = try Self.waitingRun(engine, store, on: loop)
            let keptAnswer = Self.signal(kept, engine, store, on: loop, landing: .kept)
            guard case .success(let taken) = keptAnswer else { Issue.record("\(String(describing: keptAnswer))"); return }
            #expect(taken.step == "wait")

            // Neither written nor kept: the step went on in memory, and the answer says a kill loses it.
            let lost = try Self.waitingRun(engine, store, on: loop)
            let lostAnswer = Self.signal(lost, engine, store, on: loop, landing: .failed)
            guard case .failure(let refusal) = lostAnswer else { Issue.record("\(String(describing: lostAnswer))"); return }
            #expect(refusal.code == .unavailable && refusal.message.contains("had no room left to keep it"), "\(refusal)")

            // Nothing would keep it: refused before the step takes it.
            let refused = try Self.waitingRun(engine, store, on: loop)
            store.keepsChangesNow = false
            let refusedAnswer = Self.signal(refused, engine, store, on: loop, landing: .failed)
            guard case .failure(let early) = refusedAnswer else { Issue.record("\(String(describing: refusedAnswer))"); return }
            #expect(early.code == .unavailable && early.message.contains("the signal was not taken"), "\(early)")
            #expect(engine.known(refused)?.steps.first?.status == .waiting, "the step took a refused signal")
        }
    }

    /// A cancel is answered done only once written or kept, and refused while nothing would keep
    /// it (before, it was answered at once and a kill on a full disk could undo it).
    @Test func aCancelIsAnsweredDoneOnlyWhenItsChangeIsWrittenOrKept() throws {
        let loop = EventLoop()
        try loop.isolated {
            let (engine, store) = try Self.engine(on: loop)
            let caller = CommandCaller(front: "control")
            @LoopActor func cancel(_ id: String, landing outcome: WorkflowCommitOutcome) -> Result<WorkflowShowAnswer, CommandError>? {
                var answer: Result<WorkflowShowAnswer, CommandError>?
                engine.cancelRun(id, by: caller) { answer = $0 }
                for _ in 0..<20 where answer == nil {
                    store.land(outcome)
                    loop.runOnce(maxWait: 0.01)
                }
                return answer
            }
            let kept = try Self.waitingRun(engine, store, on: loop)
            guard case .success = cancel(kept, landing: .kept) else { Issue.record("a kept cancel was not answered done"); return }
            let lost = try Self.waitingRun(engine, store, on: loop)
            guard case .failure(let refusal) = cancel(lost, landing: .failed) else { Issue.record("a cancel nothing kept was answered done"); return }
            #expect(refusal.code == .unavailable && refusal.message.contains("had no room left to keep it"), "\(refusal)")
            let refused = try Self.waitingRun(engine, store, on: loop)
            store.keepsChangesNow = false
            guard case .failure(let early) = cancel(refused, landing: .failed) else { Issue.record("a cancel was done with nothing to keep it"); return }
            #expect(early.message.contains("the cancel was not done"), "\(early)")
            #expect(engine.known(refused)?.run.status.isFinished == false, "the run was cancelled")
        }
    }
}
