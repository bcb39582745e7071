@testable import AgentLoop
@testable import AgentSupervision
import AgentTestSupport
@testable import AgentWork
import Foundation
import JSONSchema
import Logging

/// Drives a ``CommandTaskRunner`` on an event loop of the test's own, the way the supervisor's
/// loop drives it: real processes, real pipes, a temporary agent folder. Used on the test's
/// thread, which drives the loop: what touches the runner enters the loop (``onLoop(_:)``),
/// hence `Sendable` unchecked (as `ModuleTaskRunnerTests.Harness`).
final class CommandRunnerHarness: @unchecked Sendable {
    let loop: EventLoop
    let directory: String
    let runner: CommandTaskRunner
    private(set) var outcomes: [String: TaskRunOutcome] = [:]
    /// How many times each run was reported finished (exactly once is the contract).
    private(set) var finishCounts: [String: Int] = [:]

    init(_ label: String, limits: CommandTaskRunner.Limits = CommandTaskRunner.Limits(),
         environment: [String: String] = ["PATH": "/usr/local/bin:/usr/bin:/bin"], containment: WorkerContainment? = nil) {
        let loop = EventLoop()
        let directory = TestPaths.temporaryDirectory("command-\(label)")
        self.loop = loop
        self.directory = directory
        // The test keeps the containment only to read its cgroup and to finish it once the
        // runner is done with it.
        nonisolated(unsafe) let containment = containment
        runner = loop.isolated {
            CommandTaskRunner(loop: loop, agentDirectory: directory, environment: environment,
                              containment: containment, limits: limits, logger: Logger(label: "test"))
        }
    }

    /// Runs `body` on the loop (the runner is isolated to it), between its turns.
    @discardableResult
    func onLoop<T>(_ body: @LoopActor () throws -> T) rethrows -> T { try loop.isolated(body) }

    deinit {
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// A `command` task named `name`.
    static func task(_ arguments: [String], name: String = "job", shell: Bool = false, directory: String? = nil,
                     environment: [String: String] = [:], timeout: Double? = nil) -> TaskDefinition {
        TaskDefinition(name: name, type: "command", timeout: timeout,
                       command: .init(arguments: arguments, shell: shell, directory: directory, environment: environment))
    }

    /// Starts a run of `task`; returns its id. `heldAsText`: the input held as its text, as a
    /// queued run holds a large one (``RunInput``).
    @discardableResult
    func start(_ task: TaskDefinition, input: JSONValue = .null, runID: String = "run-\(UUID().uuidString.prefix(8))",
               attempt: Int = 1, heldAsText: Bool = false) -> String {
        var start = TaskRunStart(runID: runID, attempt: attempt, task: task, input: input)
        if heldAsText { start.inputText = input.serializedBytes() }
        return onLoop {
            runner.start(start) { [unowned self] report in
                if case .finished(let outcome) = report {
                    outcomes[runID] = outcome
                    finishCounts[runID, default: 0] += 1
                }
            }
            return runID
        }
    }

    /// Holds the thread that makes large runs' texts until the returned release is called (or
    /// the holder is gone); runs ended meanwhile wait for it.
    final class TextMakingHold {
        private let held = DispatchSemaphore(value: 0)
        private var released = false

        init() {
            let held = held
            CommandTaskRunner.textMaking.submit { held.wait() }
        }

        func release() {
            guard !released else { return }
            released = true
            held.signal()
        }

        deinit { release() }
    }

    /// Starts `task` and turns the loop until its program has ended and its texts are being
    /// made elsewhere (a ``TextMakingHold`` keeps them waiting); its id.
    func startWaitingForTexts(_ task: TaskDefinition) -> String {
        let runID = start(task)
        let deadline = EventLoop.now() + 30
        while onLoop({ runner.runs[runID]?.exitStatus == nil }), EventLoop.now() < deadline {
            loop.runOnce(maxWait: 0.05)
        }
        return runID
    }

    /// Waits until what was handed to the thread that makes large runs' texts has been made and
    /// its result posted, then turns the loop once to take it.
    func passTextMaking() -> Bool {
        let passed = DispatchSemaphore(value: 0)
        CommandTaskRunner.textMaking.submit { passed.signal() }
        guard passed.wait(timeout: .now() + 60) == .success else { return false }
        loop.runOnce(maxWait: 0)
        return true
    }

    /// Turns the loop until `runID` is finished (or `timeout` seconds pass: nil).
    func wait(for runID: String, timeout: Double = 30) -> TaskRunOutcome? {
        let deadline = EventLoop.now() + timeout
        while outcomes[runID] == nil, EventLoop.now() < deadline {
            loop.runOnce(maxWait: 0.05)
        }
        return outcomes[runID]
    }

    /// Turns the loop for `seconds`.
    func turn(for seconds: Double) {
        let deadline = EventLoop.now() + seconds
        while EventLoop.now() < deadline { loop.runOnce(maxWait: 0.01) }
    }

    /// Runs `task` to its end.
    func run(_ task: TaskDefinition, input: JSONValue = .null) -> TaskRunOutcome? {
        wait(for: start(task, input: input))
    }

    /// The pid of a running command (0 when it is not running).
    func pid(of runID: String) -> pid_t { onLoop { runner.runs[runID]?.pid ?? 0 } }

    /// The processes of the process group `group` (not zombies), from /proc.
    static func members(ofGroup group: pid_t) -> [pid_t] {
        ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { pid_t($0) }.filter { pid in
            guard let stat = ProcStat.read(pid) else { return false }
            return stat.group == group && stat.state != "Z"
        }
    }

    /// Waits until the group `group` has `count` live members that are not `sh`; returns them all.
    static func waitForGroup(_ group: pid_t, count: Int, command: String, timeout: Double = 10) -> [pid_t] {
        let deadline = Date().addingTimeInterval(timeout)
        var members = Self.members(ofGroup: group)
        while members.filter({ ProcFacts.command($0) == command }).count < count, Date() < deadline {
            Thread.sleep(forTimeInterval: 0.01)
            members = Self.members(ofGroup: group)
        }
        return members
    }
}
