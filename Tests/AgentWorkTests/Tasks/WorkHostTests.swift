import AgentCore
@testable import AgentLoop
@testable import AgentSupervision
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// The work layer without a supervisor: a ``WorkHost`` reaches supervision only through its
/// two narrow protocols, here a recorder standing for both. A real command task, triggered by
/// an event, runs on a real loop; every work event goes to the publisher, and routing is told
/// when the triggers change.
@Suite(.ownThreads, .serialized) struct WorkHostTests {
    /// Routing and the executor host as the work layer sees them: what is published is kept.
    @LoopActor final class Recorder: @LoopActor EventPublisher, @LoopActor ExecutorHost {
        let loop: EventLoop
        let logger = Logger(label: "work-host-test")
        var published: [(type: String, source: String, payload: JSONValue)] = []
        var routingChanges = 0
        var isStopping = false

        init(loop: EventLoop) { self.loop = loop }

        func publish(type: String, source: String, payload: [UInt8], timeNanoseconds: Int64) {
            published.append((type, source, payload.withUnsafeBytes { (try? JSONValue.parse($0)) ?? .null }))
        }
        func publishStored(type: String, source: String, payload: [UInt8], timeNanoseconds: Int64) {
            publish(type: type, source: source, payload: payload, timeNanoseconds: timeNanoseconds)
        }
        func deliver(type: String, source: String, payload: [UInt8], to process: SupervisedProcess) {}
        func send(_ kind: FrameKind, body: [UInt8], to process: SupervisedProcess) {}
        func subscribedTypes(prefix: String) -> [String] { [] }
        func deliveryTargets(of types: [String]) -> [SupervisedProcess] { [] }
        func routingChanged() { routingChanges += 1 }

        func startExecutor(name: String, module: ModuleLocation, type: String, settings: JSONObject, stopTimeout: Double) -> SupervisedProcess {
            Issue.record("a command task started an executor worker")
            return SupervisedProcess(PlannedProcess(name: name, type: type, kind: "task", module: module, settings: settings, subscriptions: [], policy: ProcessPolicy()))
        }
        func removeExecutor(_ process: SupervisedProcess) {}
        func stop(_ process: SupervisedProcess) {}
        func kill(_ process: SupervisedProcess, reason: String) {}
        func markDirty(_ process: SupervisedProcess) {}
        func flushDirty() {}

        /// Runs the loop until `condition` holds (at most `timeout` seconds); whether it does.
        func run(until condition: () -> Bool, timeout: Double = 60) -> Bool {
            let deadline = EventLoop.now() + timeout
            while !condition(), EventLoop.now() < deadline { loop.runOnce(maxWait: 0.05) }
            return condition()
        }
    }

    static func triggered(by type: String) -> TaskDefinition {
        var task = TaskDefinition(name: "echo", type: "command", command: TaskDefinition.CommandSpec(arguments: ["/bin/true"]))
        task.onEvent = TaskDefinition.EventTrigger(type: type)
        return task
    }

    /// A work layer with one task triggered by `type`, reaching supervision through `host` only.
    @LoopActor static func workTriggered(by type: String, host: Recorder) -> WorkHost {
        let work = WorkHost(host: host, events: host, environment: ProcessInfo.processInfo.environment)
        work.attach(storage: nil, fleet: nil, outputs: nil, memory: nil)
        work.setUp(WorkHost.Definitions(tasks: [Self.triggered(by: type)]), agentDirectory: NSTemporaryDirectory(), notifications: nil, containment: nil)
        return work
    }

    @Test func aTaskTriggeredByAnEventRunsAndItsEventsGoToThePublisherWithoutASupervisor() throws {
        let loop = EventLoop()
        loop.isolated {
            let recorder = Recorder(loop: loop)
            let work = Self.workTriggered(by: "ping", host: recorder)
            defer {
                work.shutDown()
                _ = recorder.run(until: { !work.hasRunsGoing }, timeout: 30)
            }
            #expect(work.triggers["ping"]?.map(\.task) == ["echo"])
            #expect(recorder.routingChanges == 1)

            Array(#"{"n": 7}"#.utf8).withUnsafeBytes { payload in
                work.fire(work.triggers["ping"] ?? [], type: "ping", source: "monitor", timeNanoseconds: 0, payload: payload)
            }
            let succeeded = recorder.run { recorder.published.contains { $0.type == "task.succeeded" } }
            #expect(succeeded, "\(recorder.published.map(\.type))")
            let events = recorder.published.filter { $0.source == "tasks" }
            #expect(events.map(\.type).first == "task.queued", "\(events.map(\.type))")
            #expect(events.allSatisfy { $0.payload["task"] == "echo" }, "\(events.map(\.payload))")
        }
    }

    @Test func aReloadWithoutTheTriggerDropsItAndTellsRouting() throws {
        let loop = EventLoop()
        loop.isolated {
            let recorder = Recorder(loop: loop)
            let work = Self.workTriggered(by: "ping", host: recorder)
            defer { work.shutDown() }
            let untriggered = TaskDefinition(name: "echo", type: "command", command: TaskDefinition.CommandSpec(arguments: ["/bin/true"]))
            work.apply(WorkHost.Definitions(tasks: [untriggered]))
            #expect(work.triggers.isEmpty)
            // Sources look their triggers up again: an event of the type fires nothing now.
            #expect(recorder.routingChanges == 2)
        }
    }
}
