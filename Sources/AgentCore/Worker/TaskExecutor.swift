import AgentModuleABI
import Foundation
import Synchronization

/// The worker side of a module's task type: one handler made at the start, then each
/// `taskRun` frame handed to the module's `task_run` on the reader thread as it arrives, or,
/// sent ahead of its not-before, held by ``HeldRuns`` and handed over at that instant — made
/// ready by the module's `task_prepare` as it arrives, when the module has it, and started
/// then with every run of the same instant by one `task_start`.
/// The module's own tasks do the work (no thread per run here); their results go back as
/// `taskResult` frames through `task_complete` (see ``WorkerHost``).
// @unchecked: the module's handler is a raw pointer, called under `moduleCalls`; `held` and
// `beforeHandOver` are set on the reader thread before any run is held.
final class TaskExecutor: @unchecked Sendable {
    private let host: WorkerHost
    private let handler: UnsafeMutableRawPointer
    private let entries: TaskEntryPoints
    /// The module's entry points are called one at a time, as agent_module.h promises: from
    /// the reader thread, and from the thread that hands an instant's held runs over.
    private let moduleCalls = Mutex(())

    /// Runs sent ahead of their instant, handed over when it comes.
    private lazy var held = HeldRuns(hold: host.completionHold) { [unowned self] runs in release(runs) }
    /// The held runs the module has not seen (not prepared), until they are handed to it or
    /// end: a cancel of one is the host's own, never the module's (`task_cancel` for a token
    /// it never saw would be kept by it as cancelled ahead, for good). Taken before
    /// `host.taskRuns` where both are.
    private let unseen = Mutex<Set<UInt64>>([])

    init(host: WorkerHost, handler: UnsafeMutableRawPointer, entries: TaskEntryPoints) {
        self.host = host
        self.handler = handler
        self.entries = entries
    }

    /// A task frame from the supervisor (reader thread).
    func handle(_ kind: FrameKind, _ body: UnsafeRawBufferPointer) {
        switch kind {
        case .taskRun:
            guard let frame = TaskFrame.parseRun(body) else { return }
            // Known from now on, so that a cancel finds it while it is held.
            host.taskRuns.withLock { $0[frame.token] = false }
            if frame.notBefore > 0, frame.notBefore > Self.realtimeNanoseconds() {
                let prepared = entries.prepared.map { entries in
                    call(token: frame.token, attempt: frame.attempt, runID: frame.runID, idempotencyKey: frame.idempotencyKey,
                         input: frame.input) { run in moduleCalls.withLock { _ in entries.prepare(handler, run) } } == Int32(AGENT_OK)
                } ?? false
                if !prepared { unseen.withLock { _ = $0.insert(frame.token) } }
                held.hold(HeldRuns.Run(token: frame.token, attempt: frame.attempt, notBefore: frame.notBefore, runID: Array(frame.runID),
                                       idempotencyKey: Array(frame.idempotencyKey), input: Array(frame.input), prepared: prepared))
            } else {
                moduleCalls.withLock { _ in
                    start(token: frame.token, attempt: frame.attempt, runID: frame.runID, idempotencyKey: frame.idempotencyKey, input: frame.input)
                }
            }
        case .taskCancel:
            guard let token = TaskFrame.token(body) else { return }
            if let run = held.remove(token: token), !run.prepared {
                // It never reached the module: it ends here.
                unseen.withLock { _ = $0.remove(token) }
                complete(token, failedWith: "cancelled before its start time")
                return
            }
            // Going, or prepared by the module, which then completes it unstarted; or taken for
            // its instant and not handed to the module yet, which ends it at the hand-over.
            let tellModule = unseen.withLock { unseen -> Bool in
                let going = host.taskRuns.withLock { runs -> Bool in
                    guard runs[token] != nil else { return false }
                    runs[token] = true
                    return true
                }
                return going && !unseen.contains(token)
            }
            if tellModule, let cancel = entries.cancel { moduleCalls.withLock { _ in cancel(handler, token) } }
        default:
            break
        }
    }

    /// Called with an instant's held runs as they are about to be handed over (tests: a cancel
    /// that comes then). Set before the first run comes.
    var beforeHandOver: (([HeldRuns.Run]) -> Void)?

    static func realtimeNanoseconds() -> Int64 { nanoseconds(CLOCK_REALTIME) }

    /// `clock` read in nanoseconds.
    static func nanoseconds(_ clock: clockid_t) -> Int64 {
        var now = timespec()
        clock_gettime(clock, &now)
        return Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
    }

    /// Hands over the runs of one instant (the holder's thread, or a pool thread): the prepared
    /// ones with one `task_start`, the others each with `task_run`.
    private func release(_ runs: [HeldRuns.Run]) {
        beforeHandOver?(runs)
        moduleCalls.withLock { _ in
            let prepared = runs.filter(\.prepared).map(\.token)
            if !prepared.isEmpty, let start = entries.prepared?.start {
                prepared.withUnsafeBufferPointer { start(handler, $0.baseAddress, $0.count) }
            }
            for run in runs where !run.prepared {
                // A cancel that came as the run was handed over.
                let cancelled = unseen.withLock { unseen in
                    unseen.remove(run.token)
                    return host.taskRuns.withLock { $0[run.token] } == true
                }
                if cancelled {
                    complete(run.token, failedWith: "cancelled before its start time")
                    continue
                }
                run.runID.withUnsafeBytes { id in
                    run.idempotencyKey.withUnsafeBytes { key in
                        run.input.withUnsafeBytes { input in start(token: run.token, attempt: run.attempt, runID: id, idempotencyKey: key, input: input) }
                    }
                }
            }
        }
    }

    /// Starts a run with `task_run` (`moduleCalls` held).
    private func start(token: UInt64, attempt: UInt32, runID: UnsafeRawBufferPointer, idempotencyKey: UnsafeRawBufferPointer,
                       input: UnsafeRawBufferPointer) {
        let status = call(token: token, attempt: attempt, runID: runID, idempotencyKey: idempotencyKey, input: input) { entries.run(handler, $0) }
        if status != Int32(AGENT_OK) {
            // Failed to start, unless the module completed it anyway.
            complete(token, failedWith: "the module's task_run refused the run (status \(status))")
        }
    }

    /// Calls `entry` with the run as agent_module.h describes it.
    private func call(token: UInt64, attempt: UInt32, runID: UnsafeRawBufferPointer, idempotencyKey: UnsafeRawBufferPointer,
                      input: UnsafeRawBufferPointer, _ entry: (UnsafePointer<agent_task_run>) -> Int32) -> Int32 {
        // The run id and the key NUL-terminated, as the header promises.
        var id = [CChar](repeating: 0, count: runID.count + 1)
        id.withUnsafeMutableBytes { $0.copyMemory(from: runID) }
        var key = [CChar](repeating: 0, count: idempotencyKey.count + 1)
        key.withUnsafeMutableBytes { $0.copyMemory(from: idempotencyKey) }
        return id.withUnsafeBufferPointer { idPointer in
            key.withUnsafeBufferPointer { keyPointer in
                var raw = agent_task_run(
                    run_token: token, run_id: idPointer.baseAddress, run_id_len: runID.count,
                    attempt: attempt, input_json: input.baseAddress?.assumingMemoryBound(to: UInt8.self),
                    input_len: input.count, idempotency_key: keyPointer.baseAddress, idempotency_key_len: idempotencyKey.count)
                return entry(&raw)
            }
        }
    }

    private func complete(_ token: UInt64, failedWith message: String) {
        Array(message.utf8).withUnsafeBytes { bytes in
            _ = host.api.task_complete?(host.api.host_ctx, token, Int32(AGENT_ERROR),
                                        bytes.baseAddress?.assumingMemoryBound(to: UInt8.self), bytes.count)
        }
    }
}
