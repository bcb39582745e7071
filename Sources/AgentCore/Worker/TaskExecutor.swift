import AgentModuleABI
import Foundation

/// The worker side of a module's task type: one handler made at the start, then each
/// `taskRun` frame handed to the module's `task_run` on the reader thread as it arrives, or,
/// sent ahead of its not-before, at that instant by ``HeldRuns``.
/// The module's own tasks do the work (no thread per run here); their results go back as
/// `taskResult` frames through `task_complete` (see ``WorkerHost``).
final class TaskExecutor: @unchecked Sendable {
    private let host: WorkerHost
    private let handler: UnsafeMutableRawPointer
    private let run: agent_task_run_fn
    private let cancel: agent_task_cancel_fn?

    /// Runs sent ahead of their instant, started by their own thread when it comes.
    private lazy var held = HeldRuns(hold: host.completionHold) { [unowned self] run in
        do {
            // A cancel that came as the run was handed over.
            if host.taskRuns.withLock({ $0[run.token] }) == true {
                complete(run.token, failedWith: "cancelled before its start time")
                return
            }
            run.runID.withUnsafeBytes { id in
                run.idempotencyKey.withUnsafeBytes { key in
                    run.input.withUnsafeBytes { input in start(token: run.token, attempt: run.attempt, runID: id, idempotencyKey: key, input: input) }
                }
            }
        }
    }

    init(host: WorkerHost, handler: UnsafeMutableRawPointer, run: @escaping agent_task_run_fn, cancel: agent_task_cancel_fn?) {
        self.host = host
        self.handler = handler
        self.run = run
        self.cancel = cancel
    }

    /// A task frame from the supervisor (reader thread).
    func handle(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) {
        switch kind {
        case .taskRun:
            guard let frame = TaskFrame.parseRun(body) else { return }
            // Known from now on, so that a cancel finds it while it is held.
            host.taskRuns.withLock { $0[frame.token] = false }
            if frame.notBefore > 0, frame.notBefore > Self.realtimeNanoseconds() {
                held.hold(HeldRuns.Run(token: frame.token, attempt: frame.attempt, notBefore: frame.notBefore, runID: Array(frame.runID),
                                       idempotencyKey: Array(frame.idempotencyKey), input: Array(frame.input)))
            } else {
                start(token: frame.token, attempt: frame.attempt, runID: frame.runID, idempotencyKey: frame.idempotencyKey, input: frame.input)
            }
        case .taskCancel:
            guard let token = TaskFrame.token(body) else { return }
            if held.remove(token: token) {
                // It never reached the module: it ends here.
                complete(token, failedWith: "cancelled before its start time")
                return
            }
            let going = host.taskRuns.withLock { runs -> Bool in
                guard runs[token] != nil else { return false }
                runs[token] = true
                return true
            }
            if going { cancel?(handler, token) }
        default:
            break
        }
    }

    static func realtimeNanoseconds() -> Int64 {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    private func start(token: UInt64, attempt: UInt32, runID: UnsafeRawBufferPointer, idempotencyKey: UnsafeRawBufferPointer,
                       input: UnsafeRawBufferPointer) {
        // The run id and the key NUL-terminated, as the header promises.
        var id = [CChar](repeating: 0, count: runID.count + 1)
        id.withUnsafeMutableBytes { $0.copyMemory(from: runID) }
        var key = [CChar](repeating: 0, count: idempotencyKey.count + 1)
        key.withUnsafeMutableBytes { $0.copyMemory(from: idempotencyKey) }
        let status = id.withUnsafeBufferPointer { idPointer in
            key.withUnsafeBufferPointer { keyPointer in
                var raw = agent_task_run(
                    run_token: token, run_id: idPointer.baseAddress, run_id_len: runID.count,
                    attempt: attempt, input_json: input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    input_len: input.count, idempotency_key: keyPointer.baseAddress, idempotency_key_len: idempotencyKey.count)
                return run(handler, &raw)
            }
        }
        if status != Int32(AGENT_OK) {
            // Failed to start, unless the module completed it anyway.
            complete(token, failedWith: "the module's task_run refused the run (status \(status))")
        }
    }

    private func complete(_ token: UInt64, failedWith message: String) {
        Array(message.utf8).withUnsafeBytes { bytes in
            _ = host.api.task_complete?(host.api.host_ctx, token, Int32(AGENT_ERROR),
                                        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }
}

