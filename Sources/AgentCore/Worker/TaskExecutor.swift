import AgentModuleABI
import Foundation

/// The worker side of a module's task type: one handler made at the start, then each
/// `taskRun` frame handed to the module's `task_run` on the reader thread, as it arrives.
/// The module's own tasks do the work (no thread per run here); their results go back as
/// `taskResult` frames through `task_complete` (see ``WorkerHost``).
final class TaskExecutor: @unchecked Sendable {
    private let host: WorkerHost
    private let handler: UnsafeMutableRawPointer
    private let run: agent_task_run_fn
    private let cancel: agent_task_cancel_fn?

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
            start(frame)
        case .taskCancel:
            guard let token = TaskFrame.token(body) else { return }
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

    private func start(_ frame: TaskFrame.Run) {
        host.taskRuns.withLock { $0[frame.token] = false }
        // The run id and the key NUL-terminated, as the header promises.
        var id = [CChar](repeating: 0, count: frame.runID.count + 1)
        id.withUnsafeMutableBytes { $0.copyMemory(from: frame.runID) }
        var key = [CChar](repeating: 0, count: frame.idempotencyKey.count + 1)
        key.withUnsafeMutableBytes { $0.copyMemory(from: frame.idempotencyKey) }
        let status = id.withUnsafeBufferPointer { idPointer in
            key.withUnsafeBufferPointer { keyPointer in
                var raw = agent_task_run(
                    run_token: frame.token, run_id: idPointer.baseAddress, run_id_len: frame.runID.count,
                    attempt: frame.attempt, input_json: frame.input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    input_len: frame.input.count, idempotency_key: keyPointer.baseAddress, idempotency_key_len: frame.idempotencyKey.count)
                return run(handler, &raw)
            }
        }
        if status != Int32(AGENT_OK) {
            // Failed to start, unless the module completed it anyway.
            let message = Array("the module's task_run refused the run (status \(status))".utf8)
            message.withUnsafeBytes { bytes in
                _ = host.api.task_complete?(host.api.host_ctx, frame.token, Int32(AGENT_ERROR),
                                            bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
            }
        }
    }
}
