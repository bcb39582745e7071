import AgentCore
import AgentLoop
import AgentSupervision
import Foundation
import JSONSchema
import Logging

/// Carries out runs of module task types (`"<module>.<type>"`) in executor workers.
///
/// Each task (a `"tasks"` entry) gets its own executor worker, started on demand when a run
/// comes and none is up, shown by `status` as `task:<task name>`; it stays warm and takes the
/// next runs on its socket, several at once up to the task's `max_concurrent` (the coordinator
/// keeps to it), and is stopped after the task's `idle_timeout` (``Configuration/idleTimeout``
/// when it gives none) without runs. A run goes
/// out as one `taskRun` frame (its input's JSON bytes as they are) and comes back as one
/// `taskResult` frame; the frames of a loop turn go out in one write.
///
/// A worker that dies costs the runs it held (failed, saying how it ended; the coordinator
/// retries per the task's policy), never the agent. A task type that declares a
/// `heartbeat_timeout` has a watchdog per run: a run silent for longer gets its worker killed
/// and is failed saying so. A cancelled (or timed-out) run's handler is cancelled; if it does
/// not end within the task's `cancel_grace` (``Configuration/cancelGrace`` when it gives none)
/// its worker is killed.
///
/// Loop thread only, like every ``TaskRunner``.
@LoopActor
package final class ModuleTaskRunner: @LoopActor TaskRunner {
    package struct Configuration {
        /// Seconds an executor without runs stays up.
        package var idleTimeout: Double = 60
        /// Seconds a cancelled run's handler has to end before its worker is killed.
        package var cancelGrace: Double = 5
        /// Seconds a task whose executor could not start has its runs failed at once, before a
        /// worker tries again (doubling while it keeps failing, up to a minute).
        package var startHold: Double = 0.5
    }

    /// What the runner needs to know about a module task type.
    package typealias ModuleTask = ModuleTaskType

    /// One run in an executor.
    private final class ActiveRun {
        let runID: String
        let token: UInt64
        let report: (TaskRunReport) -> Void
        let heartbeatTimeout: Double?
        var lastSign: Double
        /// Set by ``cancel(runID:reason:)``: how it ends, whatever the handler says.
        var endAs: TaskRunOutcome.Status?
        var graceTimer: Int?

        init(runID: String, token: UInt64, report: @escaping (TaskRunReport) -> Void, heartbeatTimeout: Double?) {
            self.runID = runID
            self.token = token
            self.report = report
            self.heartbeatTimeout = heartbeatTimeout
            lastSign = EventLoop.now()
        }
    }

    /// One executor worker and its runs.
    private final class Executor {
        /// Its worker's name: `task:<task>`, or `<executor>:<task>` on a declared executor.
        let key: String
        let definition: TaskDefinition
        let process: SupervisedProcess
        var runs: [UInt64: ActiveRun] = [:]
        var idleTimer: Int?
        /// Why the runner killed the worker, said in the runs' errors.
        var killedBecause: String?

        init(key: String, definition: TaskDefinition, process: SupervisedProcess) {
            self.key = key
            self.definition = definition
            self.process = process
        }
    }

    /// A task whose executor worker could not start as defined: its module unusable in a
    /// worker, or its handler refusing the settings (the worker's exit status says which).
    /// Until `retryAt` its runs fail at once, without a worker each — a run a second would
    /// otherwise start (and lose) a worker a second; then one worker tries again, and the hold
    /// doubles (``Configuration/startHold`` up to a minute) while it keeps failing. A changed
    /// definition tries at once.
    private struct StartFailure {
        let definition: TaskDefinition
        let reason: String
        let delay: Double
        let retryAt: Double

        static let longestDelay = 60.0
    }

    private unowned let host: any ExecutorHost
    private let lookup: (String) -> ModuleTask?
    package let configuration: Configuration
    /// Executors taking runs, by worker name.
    private var executors: [String: Executor] = [:]
    /// Tasks whose executor could not start, by worker name.
    private var startFailures: [String: StartFailure] = [:]
    /// Run id → the executor that has it.
    private var runsByID: [String: (executor: Executor, token: UInt64)] = [:]
    private var nextToken: UInt64 = 0
    private var watchdogTimer: Int?
    private var shutDownCalled = false
    private var logger: Logger { host.logger }

    /// - Parameter lookup: a task type (`"<module>.<type>"`) → its module and declaration, nil
    ///   when no enabled module provides it.
    package init(host: any ExecutorHost, configuration: Configuration = Configuration(), lookup: @escaping (String) -> ModuleTask?) {
        self.host = host
        self.configuration = configuration
        self.lookup = lookup
    }

    /// The name `status` shows for a task's executor.
    nonisolated package static func executorName(task: String) -> String { "task:\(task)" }

    /// The worker of `task` on the declared executor `executor` (nil: the task's own).
    nonisolated package static func workerName(task: String, executor: String?) -> String {
        executor.map { "\($0):\(task)" } ?? executorName(task: task)
    }

    package func start(_ run: TaskRunStart, report: @escaping (TaskRunReport) -> Void) {
        guard !shutDownCalled, !host.isStopping else {
            return report(.finished(TaskRunOutcome(status: .interrupted, error: "the agent is stopping")))
        }
        guard runsByID[run.runID] == nil else {
            return report(.finished(TaskRunOutcome(status: .failed, error: "run \(run.runID) is already going")))
        }
        guard let moduleTask = lookup(run.task.type) else {
            return report(.finished(TaskRunOutcome(status: .failed, error: "no enabled module provides the task type \"\(run.task.type)\"; enable its module in \"enabled_modules\" or fix the task's \"type\"")))
        }
        let key = Self.workerName(task: run.task.name, executor: run.executor)
        if !startFailures.isEmpty, let held = startFailures[key] {
            if held.definition != run.task {
                startFailures[key] = nil
            } else if EventLoop.now() < held.retryAt, executors[key] == nil {
                let wait = ProcessPolicy.format(held.retryAt - EventLoop.now())
                return report(.finished(TaskRunOutcome(status: .failed, error: "the task's executor worker could not start: \(held.reason) (no new worker is started for this task for \(wait) s, or until its definition changes)")))
            }
        }
        let executor = executor(named: key, for: run.task, moduleTask)
        if case .failed(let reason) = executor.process.state {
            executors[executor.key] = nil
            host.removeExecutor(executor.process)
            return report(.finished(TaskRunOutcome(status: .failed, error: "the task's executor worker could not start: \(reason)")))
        }
        nextToken += 1
        let active = ActiveRun(runID: run.runID, token: nextToken, report: report, heartbeatTimeout: moduleTask.heartbeatTimeout)
        executor.runs[active.token] = active
        runsByID[run.runID] = (executor, active.token)
        if let timer = executor.idleTimer {
            host.loop.cancel(timer)
            executor.idleTimer = nil
        }
        // Saturating: a not-before from a user's input never traps.
        let notBefore = run.notBefore.map { $0 * 1e9 }.map { !($0 > 0) ? 0 : $0 >= 9.2e18 ? Int64.max : Int64($0) } ?? 0
        TaskFrame.appendRun(token: active.token, attempt: run.attempt, runID: run.runID, idempotencyKey: run.idempotencyKey,
                            notBefore: notBefore, input: run.inputBytes,
                            to: executor.process.control)
        host.markDirty(executor.process)
        if active.heartbeatTimeout != nil { scheduleWatchdog() }
    }

    /// A run sent ahead waits in the executor's worker for its instant (see `HeldRuns`).
    package var startsAhead: Bool { true }

    /// The runs' frames go to their executors now (a batch: before the runs are recorded).
    package func flush() {
        host.flushDirty()
    }

    package func cancel(runID: String, reason: TaskRunOutcome.Status) {
        guard let (executor, token) = runsByID[runID], let run = executor.runs[token], run.endAs == nil else { return }
        run.endAs = reason
        TaskFrame.append(.taskCancel, token: token, to: executor.process.control)
        host.markDirty(executor.process)
        let grace = executor.definition.cancelGrace ?? configuration.cancelGrace
        run.graceTimer = host.loop.schedule(after: grace) { [weak self, weak executor] in
            guard let self, let executor, executor.runs[token] != nil else { return }
            run.graceTimer = nil
            kill(executor, because: "run \(runID) was \(reason == .timedOut ? "timed out" : "cancelled") and its handler did not end within \(ProcessPolicy.format(grace)) s")
        }
    }

    /// The run a token of `process`'s stands for, while it goes on (shared memory asks whose
    /// run a `context.memory` call is).
    package func runID(token: UInt64, process: SupervisedProcess) -> String? {
        executors.values.first { $0.process === process }?.runs[token]?.runID
    }

    package func shutDown() {
        guard !shutDownCalled else { return }
        shutDownCalled = true
        for executor in executors.values {
            for run in executor.runs.values.sorted(by: { $0.token < $1.token }) {
                finish(run, in: executor, TaskRunOutcome(status: .interrupted, error: "the agent stopped while the run was going"))
            }
            host.stop(executor.process)
        }
        if let watchdogTimer { host.loop.cancel(watchdogTimer) }
        watchdogTimer = nil
    }

    // MARK: Executors

    /// The task's executor, started when it has none (or when its definition changed: the
    /// old one finishes its runs and is stopped once idle).
    private func executor(named name: String, for task: TaskDefinition, _ moduleTask: ModuleTask) -> Executor {
        if let existing = executors[name], existing.definition == task {
            switch existing.process.state {
            case .starting, .running, .backoff: return existing
            default: break
            }
        }
        if let stale = executors.removeValue(forKey: name), stale.runs.isEmpty {
            retire(stale)
        }
        let process = host.startExecutor(name: name, module: moduleTask.module, type: moduleTask.type,
                                               settings: task.settings.objectValue ?? [:],
                                               stopTimeout: task.cancelGrace ?? configuration.cancelGrace)
        let executor = Executor(key: name, definition: task, process: process)
        // The closures hold the executor until its worker is gone (see workerExited), also
        // once it left `executors` to stop.
        process.taskFrames = { [unowned self] kind, body in try frame(kind, body, from: executor) }
        process.onWorkerExit = { [unowned self] how in workerExited(executor, how: how) }
        executors[name] = executor
        logger.info("task executor started for \(task.type)", metadata: ["process": "\(name)"])
        return executor
    }

    /// Stops an executor that has no runs.
    private func retire(_ executor: Executor) {
        if let timer = executor.idleTimer { host.loop.cancel(timer) }
        executor.idleTimer = nil
        if executors[executor.key] === executor { executors[executor.key] = nil }
        host.stop(executor.process)
    }

    private func becameIdle(_ executor: Executor) {
        guard executor.runs.isEmpty, executor.idleTimer == nil else { return }
        guard executors[executor.key] === executor else { return retire(executor) }
        let idleTimeout = executor.definition.idleTimeout ?? configuration.idleTimeout
        executor.idleTimer = host.loop.schedule(after: idleTimeout) { [weak self, weak executor] in
            guard let self, let executor else { return }
            executor.idleTimer = nil
            guard executor.runs.isEmpty else { return }
            logger.info("idle for \(ProcessPolicy.format(idleTimeout)) s; stopping the task executor", metadata: ["process": "\(executor.process.name)"])
            retire(executor)
        }
    }

    private func kill(_ executor: Executor, because reason: String) {
        guard executor.process.hasWorker else { return }
        if executor.killedBecause == nil { executor.killedBecause = reason }
        logger.error("\(reason); killing the task executor", metadata: ["process": "\(executor.process.name)"])
        host.kill(executor.process, reason: reason)
    }

    /// The worker is gone: every run it held ends, as the reason for its end says.
    private func workerExited(_ executor: Executor, how: String) {
        if executors[executor.key] === executor { executors[executor.key] = nil }
        if let timer = executor.idleTimer { host.loop.cancel(timer) }
        executor.idleTimer = nil
        executor.process.taskFrames = nil
        executor.process.onWorkerExit = nil
        let failure = executor.process.reportedFailure?.message
        let wasReady = executor.process.readyAt >= executor.process.spawnedAt
        holdStarts(of: executor, wasReady: wasReady, failure: failure)
        for run in executor.runs.values.sorted(by: { $0.token < $1.token }) {
            if host.isStopping {
                finish(run, in: executor, TaskRunOutcome(status: .interrupted, error: "the agent stopped while the run was going"))
            } else if let status = run.endAs {
                let what = status == .timedOut ? "timed out" : "cancelled"
                finish(run, in: executor, TaskRunOutcome(status: status, error: "\(what); the handler did not end within \(ProcessPolicy.format(executor.definition.cancelGrace ?? configuration.cancelGrace)) s, so its worker was killed"))
            } else if let reason = executor.killedBecause {
                finish(run, in: executor, TaskRunOutcome(status: .failed, error: reason))
            } else {
                let detail = failure.map { ": \($0)" } ?? ""
                var outcome = TaskRunOutcome(status: .failed, error: "the task's executor worker \(how) \(wasReady ? "during the run" : "before it was ready")\(detail)")
                outcome.executorLost = true
                finish(run, in: executor, outcome)
            }
        }
        let process = executor.process
        // On the next turn: the worker's reap is still going.
        host.loop.schedule(after: 0) { [weak host] in host?.removeExecutor(process) }
    }

    /// Records a worker that ended before it was ready because it cannot run the task as
    /// defined (see ``StartFailure``); forgets the hold once a worker got ready.
    private func holdStarts(of executor: Executor, wasReady: Bool, failure: String?) {
        let process = executor.process
        guard !wasReady else {
            if startFailures[executor.key]?.definition == executor.definition { startFailures[executor.key] = nil }
            return
        }
        guard !host.isStopping, let failure,
              process.lastExitCode == WorkerMain.ExitCode.badSettings || process.lastExitCode == WorkerMain.ExitCode.moduleUnusable else { return }
        let previous = startFailures[executor.key].flatMap { $0.definition == executor.definition ? $0 : nil }
        let longest = max(StartFailure.longestDelay, configuration.startHold)
        let delay = previous.map { min($0.delay * 2, longest) } ?? configuration.startHold
        startFailures[executor.key] = StartFailure(definition: executor.definition, reason: failure, delay: delay, retryAt: EventLoop.now() + delay)
        logger.error("the task's executor worker could not start: \(failure); its runs fail without a new worker for \(ProcessPolicy.format(delay)) s, or until the task's definition changes",
                     metadata: ["process": "\(process.name)"])
    }

    // MARK: Frames

    private func frame(_ kind: FrameKind, _ body: UnsafeRawBufferPointer, from executor: Executor) throws {
        switch kind {
        case .taskResult:
            guard let result = TaskFrame.parseResult(body) else { throw FrameError("task-result frame of \(body.count) bytes") }
            guard let run = executor.runs[result.token] else { return }
            var outcome: TaskRunOutcome
            if result.succeeded, result.data.count > InputSize.largest {
                // Not parsed: a frame may hold 16 MiB, parsed on the loop.
                outcome = TaskRunOutcome(status: .failed, error: "the handler's output is \(result.data.count) bytes of JSON, more than \(InputSize.largest) (1 MiB), the most a run's output may have: return a path or a URL to the data instead")
            } else if result.succeeded {
                let output = (try? JSONValue.parse(result.data)) ?? .string(String(decoding: result.data, as: UTF8.self))
                outcome = TaskRunOutcome(status: .succeeded, output: output)
            } else {
                // An error is a message: what a run keeps of it is bounded as a person's is.
                let kept = String(decoding: result.data.prefix(65536), as: UTF8.self)
                outcome = TaskRunOutcome(status: .failed, error: result.data.count > 65536 ? kept + "… (\(result.data.count) bytes in all)" : kept)
            }
            if let status = run.endAs, outcome.status == .failed {
                outcome = TaskRunOutcome(status: status, error: status == .timedOut ? "timed out" : "cancelled")
            }
            finish(run, in: executor, outcome)
        case .taskProgress:
            guard let progress = TaskFrame.parseProgress(body) else { throw FrameError("task-progress frame of \(body.count) bytes") }
            guard let run = executor.runs[progress.token] else { return }
            run.lastSign = EventLoop.now()
            run.report(.progress(fraction: progress.fraction, message: progress.message.isEmpty ? nil : String(decoding: progress.message, as: UTF8.self)))
        case .taskHeartbeat:
            guard let token = TaskFrame.token(body) else { throw FrameError("task-heartbeat frame of \(body.count) bytes") }
            guard let run = executor.runs[token] else { return }
            run.lastSign = EventLoop.now()
            run.report(.heartbeat)
        default:
            throw FrameError("unexpected \(kind) frame from a task executor")
        }
    }

    private func finish(_ run: ActiveRun, in executor: Executor, _ outcome: TaskRunOutcome) {
        guard executor.runs.removeValue(forKey: run.token) != nil else { return }
        runsByID[run.runID] = nil
        if let timer = run.graceTimer { host.loop.cancel(timer) }
        run.graceTimer = nil
        run.report(.finished(outcome))
        if executor.runs.isEmpty, executor.process.hasWorker, !shutDownCalled { becameIdle(executor) }
    }

    // MARK: Watchdog

    /// Checks the runs with a heartbeat timeout, as often as the tightest needs.
    private func scheduleWatchdog() {
        guard watchdogTimer == nil else { return }
        let periods = executors.values.flatMap { $0.runs.values.compactMap(\.heartbeatTimeout) }
        guard let tightest = periods.min() else { return }
        watchdogTimer = host.loop.schedule(after: max(0.01, min(1, tightest / 4))) { [weak self] in
            guard let self else { return }
            watchdogTimer = nil
            checkHeartbeats()
            scheduleWatchdog()
        }
    }

    private func checkHeartbeats() {
        let now = EventLoop.now()
        for executor in executors.values where executor.killedBecause == nil {
            for run in executor.runs.values where run.endAs == nil {
                guard let timeout = run.heartbeatTimeout, now - run.lastSign > timeout else { continue }
                kill(executor, because: "watchdog: run \(run.runID) sent no heartbeat for \(ProcessPolicy.format(timeout)) s (the task type's heartbeat_timeout)")
                break
            }
        }
    }
}
