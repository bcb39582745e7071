@testable import AgentLoop
import AgentBase
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The inputs the unfinished workflow runs hold are bounded: past the bound a request is
/// refused (503, try again) and an event starts no run, until runs end.
@Suite(.ownThreads) struct WorkflowHeldInputTests {
    let loop = EventLoop()

    static let waiting = #"{"input": {"type": "object"}, "on_event": {"type": "big.thing"}, "steps": [{"id": "w", "wait_signal": {"name": "go"}}]}"#

    @LoopActor func engine(store: WorkflowWaitGapTests.HeldStore?) throws -> WorkflowEngine {
        let logger = Logger(label: "test")
        let engine = WorkflowEngine(loop: loop, store: store, tasks: TaskCoordinator(loop: loop, store: nil, logger: logger), logger: logger)
        engine.apply([try #require(WorkflowSettings.parse(name: "hold", source: try JSONValue.parse(Data(Self.waiting.utf8))))])
        return engine
    }

    /// A `workflow_run` request as the front decodes it (its input measured there).
    static func request(_ input: JSONValue) throws -> WorkflowRunCommand.Request {
        try JSONDecoder().decode(WorkflowRunCommand.Request.self, from: Data((["name": "hold", "input": input] as JSONValue).serializedBytes()))
    }

    func spin(until condition: () -> Bool) {
        let deadline = Date().addingTimeInterval(30)
        while !condition(), Date() < deadline { loop.runOnce(maxWait: 0.01) }
    }

    @Test func requestsPastTheBoundAreRefusedUntilARunEnds() throws {
        let requests = try (0..<4).map { try Self.request(RunInputHeldTests.input(kib: 40, tag: $0)) }
        let each = requests[0].inputBytes
        #expect(each > 40_000 && each < 50_000, "\(each)")
        let store = WorkflowWaitGapTests.HeldStore()
        try loop.isolated {
            let engine = try engine(store: store)
            engine.heldInputLimit = 2 * each + each / 2
            var answers: [Result<WorkflowShowAnswer, CommandError>] = []
            // Two asked for together, their commits pending: the third finds no room.
            for request in requests.prefix(3) { engine.runWorkflow(request, requestedBy: "http") { answers.append($0) } }
            guard answers.count == 1, case .failure(let refused) = answers[0] else {
                Issue.record("the third request was not refused at once: \(answers)")
                return
            }
            #expect(refused.code == .unavailable && refused.retryAfter == 5)
            #expect(refused.message.contains("was not started") && refused.message.contains("at most 0 MiB"), "\(refused.message)")
            spin { store.release() == 0 && answers.count == 3 }
            let started = try answers.dropFirst().map { try $0.get().run["id"]?.stringValue ?? "" }
            #expect(started.count == 2 && engine.heldInputBytes == 2 * each)

            // One ends: its input is let go, and the next request is taken.
            _ = engine.cancel(started[0], by: "test")
            #expect(engine.heldInputBytes == each)
            engine.runWorkflow(requests[3], requestedBy: "http") { answers.append($0) }
            spin { store.release() == 0 && answers.count == 4 }
            #expect((try? answers[3].get()) != nil, "\(answers[3])")
            #expect(engine.heldInputBytes == 2 * each)
        }
    }

    @Test func eventsPastTheBoundStartNoRunUntilOneEnds() throws {
        let payload = RunInputHeldTests.input(kib: 40)
        let bytes = try #require(payload.serializedLength(atMost: 1 << 20))
        // A run's input is the whole event, counted whole.
        let event: JSONValue = ["type": "big.thing", "source": "test", "time": .string(TaskRun.iso(1)), "payload": payload]
        let each = try #require(event.serializedLength(atMost: 1 << 20))
        try loop.isolated {
            let engine = try engine(store: nil)
            engine.heldInputLimit = 2 * each + each / 2
            for _ in 0..<3 { engine.eventArrived(type: "big.thing", source: "test", time: 1, payload: payload, payloadBytes: bytes) }
            spin { engine.live.count >= 2 && engine.arrivals.isEmpty }
            #expect(engine.live.count == 2, "the third event was left out")
            #expect(engine.heldInputBytes == 2 * each)
            _ = engine.cancel(try #require(engine.live.keys.sorted().first), by: "test")
            engine.eventArrived(type: "big.thing", source: "test", time: 2, payload: payload, payloadBytes: bytes)
            spin { engine.live.count == 2 && engine.arrivals.isEmpty }
            #expect(engine.live.count == 2 && engine.heldInputBytes == 2 * each)
        }
    }
}
