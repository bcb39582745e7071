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

    /// A work layer with one task triggered by `type` (`task`, else ``triggered(by:)``'s),
    /// reaching supervision through `host` only.
    @LoopActor static func workTriggered(by type: String, host: Recorder, task: TaskDefinition? = nil) -> WorkHost {
        let work = WorkHost(host: host, events: host, environment: ProcessInfo.processInfo.environment)
        work.attach(storage: nil, fleet: nil, outputs: nil, memory: nil)
        work.setUp(WorkHost.Definitions(tasks: [task ?? Self.triggered(by: type)]), agentDirectory: NSTemporaryDirectory(), notifications: nil, containment: nil)
        return work
    }

    /// Runs `body` with a work layer whose task `echo` runs the shell line `line` for each event
    /// `big`; stops it after, waiting for its runs to end.
    @LoopActor static func withShellTriggered(_ line: String, on loop: EventLoop, _ body: (WorkHost, Recorder) throws -> Void) rethrows {
        let recorder = Recorder(loop: loop)
        var task = TaskDefinition(name: "echo", type: "command", command: TaskDefinition.CommandSpec(arguments: [line], shell: true))
        task.onEvent = TaskDefinition.EventTrigger(type: "big")
        let work = Self.workTriggered(by: "big", host: recorder, task: task)
        defer {
            work.shutDown()
            _ = recorder.run(until: { !work.hasRunsGoing }, timeout: 30)
        }
        try body(work, recorder)
    }

    @Test func aLargeEventsRunHoldsItsTextAndRunsPastTheBoundOnHeldInputAreLeftOut() throws {
        let loop = EventLoop()
        try loop.isolated { try Self.withShellTriggered("cat", on: loop) { work, recorder in
            let tasks = try #require(work.tasks)
            let payloads = (0..<3).map { tag -> [UInt8] in
                let payload: JSONValue = ["tag": .number(JSONNumber(tag)), "items": .array((0..<20_000).map { .number(JSONNumber($0 % 10)) })]
                return payload.serializedBytes()
            }
            let text = payloads[0].withUnsafeBytes { WorkHost.eventInputText(type: "big", source: "monitor", time: TaskRun.iso(0), payload: $0) }
            // Room for two runs' inputs, not three.
            tasks.heldInputLimit = 2 * text.count + text.count / 2
            for payload in payloads {
                payload.withUnsafeBytes { work.fire(work.triggers["big"] ?? [], type: "big", source: "monitor", timeNanoseconds: 0, payload: $0) }
            }
            #expect(tasks.heldInputBytes == 2 * text.count, "the two runs hold their inputs' text")
            #expect(recorder.published.filter { $0.type == "task.queued" }.count == 2, "the third is left out")
            #expect(recorder.run { recorder.published.filter { $0.type == "task.succeeded" }.count == 2 })
            // The command read the input the text says: the event, its payload whole.
            let outputs = tasks.recent.values.compactMap(\.output)
            let expected = try JSONValue.parse(text)
            #expect(outputs.count == 2 && outputs.contains { $0 == expected }, "\(outputs.map { $0["payload"]?["tag"] ?? .null })")
            #expect(outputs.allSatisfy { $0["payload"]?["items"]?.arrayValue?.count == 20_000 && $0["type"] == "big" })
            #expect(tasks.heldInputBytes == 0)
        } }
    }

    @Test func aLargeEventOfManyLinesReachesItsRunAsOneLine() throws {
        let loop = EventLoop()
        try loop.isolated { try Self.withShellTriggered("wc -l", on: loop) { work, recorder in
            // A module's own bytes, pretty-printed: one item a line.
            let payload = Array(("[\n" + (0..<5_000).map { "  \($0)" }.joined(separator: ",\n") + "\n]").utf8)
            payload.withUnsafeBytes { work.fire(work.triggers["big"] ?? [], type: "big", source: "monitor", timeNanoseconds: 0, payload: $0) }
            #expect(recorder.run { recorder.published.contains { $0.type == "task.succeeded" } })
            let run = try #require(work.tasks?.recent.values.first)
            #expect(run.output == 1, "the command read its input as one line, then its end")
            #expect(run.input["payload"]?.arrayValue?.count == 5_000)
        } }
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
