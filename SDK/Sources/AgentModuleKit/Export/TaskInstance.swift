import AgentModuleABI
import Foundation
import Synchronization

/// One executor's handler: its runs by the host's token, to start prepared ones and to cancel.
final class TaskInstance: Sendable {
    /// Where a prepared run is before it starts.
    private enum Gate {
        /// Prepared; its Task has not reached the gate yet.
        case pending
        /// Its Task waits there: resumed with true to start, false when cancelled.
        case waiting(UnsafeContinuation<Bool, Never>)
        /// Decided before its Task reached the gate (true: start).
        case decided(Bool)
    }

    private struct Runs {
        var tasks: [UInt64: Task<Void, Never>] = [:]
        /// Runs that ended, or were cancelled, before their Task was registered (the host may
        /// cancel from another thread than the one that starts runs).
        var ended: Set<UInt64> = []
        var cancelled: Set<UInt64> = []
        /// Prepared runs not started yet.
        var gates: [UInt64: Gate] = [:]
    }

    let prepare: TaskEntry.Prepare
    let host: HostBridge
    private let runs = Mutex(Runs())

    init(prepare: @escaping TaskEntry.Prepare, host: HostBridge) {
        self.prepare = prepare
        self.host = host
    }

    /// Keeps `task` of run `token` for a cancel, unless it already ended. The Task is made
    /// before this (not under the lock, which its own end takes as well: with a burst of runs,
    /// the runs' Tasks waited for each other's creation).
    func register(_ task: Task<Void, Never>, token: UInt64) {
        let cancelled = runs.withLock { runs -> Bool in
            if runs.ended.remove(token) == nil { runs.tasks[token] = task }
            return runs.cancelled.remove(token) != nil
        }
        if cancelled { task.cancel() }
    }

    /// Run `token` ended: it leaves the table (or is noted, if it ended before it got there).
    func ended(_ token: UInt64) {
        runs.withLock { runs in
            if runs.tasks.removeValue(forKey: token) == nil { runs.ended.insert(token) }
        }
    }

    /// Run `token` is prepared: it waits at its gate until ``start(_:)`` or ``cancel(_:)``.
    func prepared(_ token: UInt64) {
        runs.withLock { $0.gates[token] = .pending }
    }

    /// Waits until prepared run `token` is started (true) or cancelled (false).
    func gate(_ token: UInt64) async -> Bool {
        await withUnsafeContinuation { continuation in
            let decided = runs.withLock { runs -> Bool? in
                if case .decided(let start) = runs.gates[token] {
                    runs.gates[token] = nil
                    return start
                }
                runs.gates[token] = .waiting(continuation)
                return nil
            }
            if let decided { continuation.resume(returning: decided) }
        }
    }

    /// Whether prepared run `token`'s Task waits at its gate now (for tests).
    func isWaiting(_ token: UInt64) -> Bool {
        runs.withLock { if case .waiting = $0.gates[token] { true } else { false } }
    }

    /// Starts the prepared runs `tokens`, in order; tokens not prepared (cancelled) are passed over.
    func start(_ tokens: UnsafeBufferPointer<UInt64>) {
        var waiting: [UnsafeContinuation<Bool, Never>] = []
        waiting.reserveCapacity(tokens.count)
        runs.withLock { runs in
            for token in tokens {
                switch runs.gates[token] {
                case .waiting(let continuation):
                    runs.gates[token] = nil
                    waiting.append(continuation)
                case .pending:
                    runs.gates[token] = .decided(true)
                case .decided, nil:
                    break
                }
            }
        }
        for continuation in waiting { continuation.resume(returning: true) }
    }

    /// Cancels run `token`: a prepared one never starts; a going one's Task is cancelled, now
    /// or as soon as it is registered.
    func cancel(_ token: UInt64) {
        enum Action { case none, stopGate(UnsafeContinuation<Bool, Never>), cancel(Task<Void, Never>) }
        let action = runs.withLock { runs -> Action in
            switch runs.gates[token] {
            case .waiting(let continuation):
                runs.gates[token] = nil
                return .stopGate(continuation)
            case .pending:
                runs.gates[token] = .decided(false)
                return .none
            case .decided(true):
                // Started already, its Task not at the gate yet: it is cancelled as it goes.
                break
            case .decided(false):
                return .none
            case nil:
                break
            }
            guard let task = runs.tasks[token] else {
                if !runs.ended.contains(token) { runs.cancelled.insert(token) }
                return .none
            }
            return .cancel(task)
        }
        switch action {
        case .none: break
        case .stopGate(let continuation): continuation.resume(returning: false)
        case .cancel(let task): task.cancel()
        }
    }

    /// Runs a prepared run's body and completes it with the host.
    func execute(_ prepared: TaskEntry.Prepared, context: TaskContext, token: UInt64) async {
        let result: Result<[UInt8], any Error>
        do {
            result = .success(try await prepared(context))
        } catch {
            result = .failure(error)
        }
        ended(token)
        switch result {
        case .success(let output): host.taskComplete(token: token, succeeded: true, data: output)
        case .failure(let error as CancellationError):
            host.taskComplete(token: token, succeeded: false, data: Array("cancelled (\(error))".utf8))
        case .failure(let error): host.taskComplete(token: token, succeeded: false, data: Array("\(error)".utf8))
        }
    }

    /// What `task_run` and `task_prepare` are given, copied out of the host's buffers.
    static func context(of run: agent_task_run, host: HostBridge) -> (input: [UInt8], context: TaskContext) {
        let runID = run.run_id.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: run.run_id_len), as: UTF8.self) } ?? ""
        let key = run.idempotency_key.map { String(decoding: UnsafeRawBufferPointer(start: $0, count: run.idempotency_key_len), as: UTF8.self) } ?? runID
        let input = run.input_json.map { Array(UnsafeBufferPointer(start: $0, count: run.input_len)) } ?? []
        return (input, TaskContext(runID: runID, idempotencyKey: key, attempt: Int(run.attempt), token: run.run_token, host: host))
    }
}

let taskRunEntry: agent_task_run_fn = { handle, run in
    guard let handle, let run else { return Int32(AGENT_ERROR) }
    let instance = Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue()
    let token = run.pointee.run_token
    let (input, context) = TaskInstance.context(of: run.pointee, host: instance.host)
    let task = Task {
        await instance.execute(instance.prepare(input), context: context, token: token)
    }
    instance.register(task, token: token)
    return Int32(AGENT_OK)
}

/// A run sent ahead of its instant: its Task decodes the input now and waits at its gate for
/// `task_start`, so that at the instant the run only has to be resumed.
let taskPrepareEntry: agent_task_prepare_fn = { handle, run in
    guard let handle, let run else { return Int32(AGENT_ERROR) }
    let instance = Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue()
    let token = run.pointee.run_token
    let (input, context) = TaskInstance.context(of: run.pointee, host: instance.host)
    instance.prepared(token)
    let task = Task {
        let prepared = instance.prepare(input)
        guard await instance.gate(token) else {
            instance.ended(token)
            instance.host.taskComplete(token: token, succeeded: false, data: Array("cancelled before its start time".utf8))
            return
        }
        await instance.execute(prepared, context: context, token: token)
    }
    instance.register(task, token: token)
    return Int32(AGENT_OK)
}

let taskStartEntry: agent_task_start_fn = { handle, tokens, count in
    guard let handle, let tokens, count > 0 else { return }
    Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue().start(UnsafeBufferPointer(start: tokens, count: count))
}

let taskCancelEntry: agent_task_cancel_fn = { handle, token in
    guard let handle else { return }
    let instance = Unmanaged<TaskInstance>.fromOpaque(handle).takeUnretainedValue()
    instance.cancel(token)
}
