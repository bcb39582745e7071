@testable import AgentLoop
import AgentBase
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging
import Testing

/// A large input whose text is known is held as that text alone, from the request to the
/// runner, the store's record and the recent runs; the inputs the unfinished runs hold are
/// bounded, a request past the bound refused with what to do.
@Suite(.ownThreads) struct RunInputHeldTests {
    let loop = EventLoop()
    let runner = RecordingRunner()

    /// An object input of about `kib` KiB of JSON.
    static func input(kib: Int, tag: Int = 0) -> JSONValue {
        ["tag": .number(JSONNumber(tag)), "items": .array((0..<(kib * 1024 / 2)).map { .number(JSONNumber($0 % 10)) })]
    }

    /// Whether two values are equal, as a Bool: a failure does not print values of 40 KiB.
    static func same(_ a: JSONValue?, _ b: JSONValue?) -> Bool { a == b }

    /// A `task_run` request as the front decodes it (its input's text made there).
    static func request(_ task: String, _ input: JSONValue) throws -> TaskRunCommand.Request {
        let body: JSONValue = ["name": .string(task), "input": input]
        return try JSONDecoder().decode(TaskRunCommand.Request.self, from: Data(body.serializedBytes()))
    }

    @Test func aLargeInputWithItsTextIsHeldAsTheTextAloneAndReadsBackTheSame() {
        let large = Self.input(kib: 40)
        var held = RunInput(large)
        #expect(!held.isTextOnly && held.textBytes == 0)
        held.setText(large.serializedBytes())
        #expect(held.isTextOnly, "past \(RunInput.textOnlyFrom) bytes the value is let go")
        #expect(Self.same(held.value, large))
        held.dropText()
        #expect(held.isTextOnly && Self.same(held.value, large), "the text is all there is: kept")

        let small: JSONValue = ["n": 1]
        var kept = RunInput(small)
        kept.setText(small.serializedBytes())
        #expect(!kept.isTextOnly && kept.textBytes == 7)
        kept.dropText()
        #expect(kept.textBytes == 0 && kept.value == small)
        #expect(held == RunInput(large) ? true : false, "equal inputs, however held")
    }

    @Test func aRunsRecordWithItsInputHeldAsTextIsTheRecordOfItsValue() throws {
        let large = Self.input(kib: 40)
        var run = TaskRun(id: "r-1", task: "t", input: large, requestedBy: .http)
        run.output = ["done": true]
        let whole = run.storedJSON
        let listedWhole = RecordTexts(whole)
        run.inputText = InputText(large.serializedBytes())
        #expect(run.held.isTextOnly)
        #expect(Self.same(try JSONValue.parse(run.storedBytes), whole))
        let texts = RecordTexts(run)
        #expect(Self.same(try JSONValue.parse(texts.data), whole))
        #expect(texts.length == listedWhole.length)
        let listed = try JSONValue.parse(try #require(texts.listed))
        #expect(Self.same(listed, try JSONValue.parse(try #require(listedWhole.listed))), "the record for lists leaves the input out, as for a value")
        #expect(listed["omitted"] == ["input"] && listed["input"] == nil)
        #expect(Self.same(TaskRun(stored: whole)?.input, large))

        // An answer leaves it out and names it; `task show` (json) has it.
        let answer = TaskRunAnswer(run).run
        #expect(answer["input"] == nil && answer["omitted"] == ["input"])
        #expect(Self.same(run.json["input"], large) && run.json["omitted"] == nil)

        // A run read back from a store holds its large input as text again; a small one as a value.
        var read = try #require(TaskRun(stored: whole))
        read.holdLargeInputAsText()
        #expect(read.held.isTextOnly && Self.same(read.input, large))
        var small = TaskRun(id: "r-2", task: "t", input: ["n": 1], requestedBy: .cli)
        small.holdLargeInputAsText()
        #expect(!small.held.isTextOnly)
    }

    /// A small input with its text beside a long output: the record for lists keeps the input
    /// (it once lost it, reading back as `{}`).
    @Test func aSmallInputWithItsTextStaysInTheRecordForListsBesideALongOutput() throws {
        var run = TaskRun(id: "r-1", task: "t", input: ["n": 1], requestedBy: .http)
        run.held.setText(Array(#"{"n":1}"#.utf8), keepingValue: true)
        run.output = .string(String(repeating: "x", count: 20_000))
        let texts = RecordTexts(run)
        let listed = try JSONValue.parse(try #require(texts.listed))
        #expect(listed["input"] == ["n": 1] && listed["omitted"] == ["output"], "\(listed)")
        #expect(try JSONValue.parse(texts.data)["input"] == ["n": 1])
    }

    @LoopActor func coordinator(limit: Int) -> TaskCoordinator {
        let coordinator = TaskCoordinator(loop: loop, store: nil, logger: Logger(label: "test"))
        coordinator.register(runner, for: "command")
        coordinator.apply([TaskCoordinatorTests.task("t")])
        coordinator.heldInputLimit = limit
        return coordinator
    }

    @Test func requestsPastTheBoundOnHeldInputAreRefusedUntilRunsEnd() throws {
        let inputs = (0..<4).map { Self.input(kib: 40, tag: $0) }
        let requests = try inputs.map { try Self.request("t", $0) }
        let each = try #require(requests[0].inputText?.count)
        try loop.isolated {
            // Room for two runs' inputs, not three.
            let tasks = coordinator(limit: 2 * each + each / 2)
            var answers: [Result<TaskRunAnswer, CommandError>] = []
            for request in requests.prefix(3) { tasks.runTask(request, origin: .http) { answers.append($0) } }
            #expect(answers.count == 3)
            #expect(try answers[0].get().run["omitted"] == ["input"])
            #expect((try? answers[1].get()) != nil)
            guard case .failure(let refused) = answers[2] else {
                Issue.record("the third request was queued: \(answers[2])")
                return
            }
            #expect(refused.code == .unavailable && refused.retryAfter == 5)
            #expect(refused.message.contains("was not queued") && refused.message.contains("pass a file's path or a URL"), "\(refused.message)")
            #expect(tasks.heldInputBytes == 2 * each)

            // The runner has the input as its text, and reads the same value from it.
            let started = try #require(runner.started.first)
            let same = started.input == inputs[0] && (try? JSONValue.parse(started.inputBytes)) == inputs[0]
            #expect(started.held.isTextOnly && same)

            // One ends: its input is let go, and the next request is taken.
            runner.finish(started.runID, TaskRunOutcome(status: .succeeded))
            #expect(tasks.heldInputBytes == each)
            tasks.runTask(requests[3], origin: .http) { answers.append($0) }
            #expect((try? answers[3].get()) != nil, "\(answers[3])")
            let second = runner.started.count == 2 && runner.started[1].input == inputs[1]
            #expect(second)
        }
    }

    /// A command started at once takes the request's value (it reads `INPUT_*` from it, and
    /// need not read the text again on the loop); the queue and the run's record hold the text.
    @Test func aRunnerReadingValuesGetsTheValueOfARunStartedAtOnce() throws {
        let inputs = (0..<2).map { Self.input(kib: 40, tag: $0) }
        let requests = try inputs.map { try Self.request("t", $0) }
        try loop.isolated {
            runner.readsValues = true
            let tasks = coordinator(limit: TaskCoordinator.defaultHeldInputLimit)
            var answers: [Result<TaskRunAnswer, CommandError>] = []
            for request in requests { tasks.runTask(request, origin: .cli) { answers.append($0) } }
            let ids = try answers.map { try #require(try $0.get().run["id"]?.stringValue) }
            #expect(runner.started.count == 1 && runner.started[0].held.isTextOnly == false)
            #expect(Self.same(runner.started[0].input, inputs[0]))
            #expect(tasks.knownRun(ids[0])?.held.isTextOnly == true && tasks.knownRun(ids[1])?.held.isTextOnly == true)
            // The queued one waited as text: its runner reads the value from it.
            runner.finish(ids[0], TaskRunOutcome(status: .succeeded))
            #expect(runner.started.count == 2 && runner.started[1].held.isTextOnly)
            #expect(Self.same(runner.started[1].input, inputs[1]))
            #expect(tasks.knownRun(ids[0])?.held.isTextOnly == true, "finished, it keeps the text alone")
        }
    }

    @Test func onlyTheNewestLargeFinishedRunsAreKeptInMemory() throws {
        let large = Self.input(kib: 20)
        try loop.isolated {
            let tasks = coordinator(limit: TaskCoordinator.defaultHeldInputLimit)
            var ids: [String] = []
            for tag in 0..<(TaskCoordinator.recentLargeLimit + 2) {
                var answer: Result<TaskRunAnswer, CommandError>?
                tasks.runTask(try Self.request("t", ["tag": .number(JSONNumber(tag)), "items": large["items"]!]), origin: .cli) { answer = $0 }
                let id = try #require(try answer?.get().run["id"]?.stringValue)
                ids.append(id)
                runner.finish(id, TaskRunOutcome(status: .succeeded, output: ["small": true]))
            }
            let small = tasks.submit(task: "t", input: ["n": 1], priority: .normal, notBefore: nil, requestedBy: .cli)
            runner.finish(small.id, TaskRunOutcome(status: .succeeded))
            #expect(tasks.knownRun(ids[0]) == nil && tasks.knownRun(ids[1]) == nil, "the oldest large ones are let go")
            #expect(ids.dropFirst(2).allSatisfy { tasks.knownRun($0)?.status == .succeeded })
            #expect(tasks.knownRun(small.id)?.status == .succeeded, "a small one is kept as before")
            #expect(tasks.knownRun(ids.last!)?.held.isTextOnly == true)
            #expect(tasks.heldInputBytes == 0)
        }
    }
}
