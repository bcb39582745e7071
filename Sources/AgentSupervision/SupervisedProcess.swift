import AgentCore
import AgentLoop
import Foundation
import JSONSchema

/// One configured process and its current worker, if any. Lives as long as the process is
/// configured; workers come and go.
@LoopActor
package final class SupervisedProcess {
    /// What the settings say about this process (a reload compares it).
    package let planned: PlannedProcess
    /// The name's UTF-8 bytes, as deliveries carry them (a buffer that routing reads without
    /// a retain).
    package let nameBytes: FrameBuffer
    package var name: String { planned.name }
    package var type: String { planned.type }
    package var kind: String { planned.kind }
    /// Decided once: routing asks it for every event.
    package let isChatbot: Bool
    package var module: ModuleLocation { planned.module }
    /// Settings passed to the module (host-level keys removed, defaults applied).
    package var settings: JSONObject { planned.settings }
    /// Event types this process receives.
    package var subscriptions: [String] { planned.subscriptions }
    package var policy: ProcessPolicy { planned.policy }

    package var state: ProcessState = .stopped {
        didSet {
            switch state {
            case .failed, .exited, .stopped, .stopping: acceptsDeliveries = false
            default: acceptsDeliveries = true
            }
        }
    }
    /// Whether events are queued for it (routing asks for every event).
    package private(set) var acceptsDeliveries = false
    /// `policy.queueLimit`, read for every event routed to it.
    package let queueLimit: Int
    package var pid: pid_t = 0
    package var pidFD: Int32 = -1
    package var channelFD: Int32 = -1
    package var decoder = FrameDecoder()
    /// The worker's stdout and stderr pipes (in that order).
    package var outputs = [WorkerOutput(stream: .stdout), WorkerOutput(stream: .stderr)]

    /// Deliveries not yet written to the worker; `sent` bytes of it already were, and the
    /// frames before `sentBoundary` entirely.
    package let outgoing = FrameBuffer()
    package private(set) var sent = 0
    private var sentBoundary = 0
    /// Other frames (start, stop, replies): written ahead of queued deliveries and outside the
    /// delivery window; `controlSent` bytes of it already were.
    package let control = FrameBuffer()
    package private(set) var controlSent = 0
    /// Bytes of deliveries written to the worker's socket that it has not reported taken (see
    /// `FrameCodec.deliveryWindow`).
    package var inFlight = 0
    /// The worker's delivery ring (nil: deliveries go on the socket) and the eventfd on which
    /// it signals freed room.
    package var ring: SharedRing?
    package var roomSignalFD: Int32 = -1
    /// The worker's emit ring (nil: its frames come on the socket); `onSocket` markers read
    /// there whose frame has not been read from the socket yet; a drain of it is scheduled.
    package var emitRing: SharedRing?
    /// The eventfd on which the supervisor tells the worker's writer that it freed room.
    package var emitRoomFD: Int32 = -1
    package var awaitingSocketFrames = 0
    package var emitDrainScheduled = false
    /// A drain of the socket's frames that stopped at its time slice goes on at the next turn.
    package var channelDrainScheduled = false
    /// Drains (ring or socket) that stopped at their time slice: a flood of small frames.
    package var slicedDrains = 0
    /// A `wake` frame is in `control`, not yet written.
    package var wakeUnsent = false
    package var waitingForWritable = false
    package var dirty = false

    /// When the current (or last) worker was started or adopted, and when it reported ready
    /// (monotonic seconds; 0: never).
    package var spawnedAt = 0.0
    package var readyAt = 0.0
    /// When the last worker's end was noticed (its pidfd), monotonic seconds: with the two above,
    /// a restart's steps (agent-bench figure 3).
    package var reapedAt = 0.0
    /// The worker's exit reaper (its ready frame names it; 0: none), ended by the orphan sweep
    /// once the worker is dead.
    package var exitReaper: pid_t = 0
    package var restarts = 0
    package var consecutiveFailures = 0
    package var stopTimer: Int?
    package var restartTimer: Int?
    /// Starts in a row that failed for lack of resources (descriptors, memory): retried.
    package var startRetries = 0
    package var lastExit: String?
    package var lastExitCode: Int32?
    package var lastSignal: Int32?
    /// Why the supervisor killed the current worker, if it did.
    package var killReason: String?
    /// The signal that stopped the worker (SIGSTOP, SIGTSTP…) until it is continued.
    package var suspendedBy: Int32?
    /// When the state last changed (monotonic seconds).
    package var stateSince = 0.0
    /// Monotonic times of recent restarts, for the start limit.
    package var restartTimes: [Double] = []
    /// Monotonic times of its workers' recent ends that nobody asked for (the last
    /// ``failuresKept``), for readiness's flapping window.
    package var failureTimes: [Double] = []
    package static let failuresKept = 100
    /// Whether a worker of it ever reported ready (readiness tells a first start from a restart).
    package var wasEverReady = false
    /// Called once the worker is gone after a stop (reload and process commands use it).
    package var onStopped: [() -> Void] = []
    /// A reload's replacement that waits for the worker of the process it replaces to be gone
    /// before its first start (cleared by the start).
    package var awaitsPredecessor = false
    /// The failure the worker reported before exiting, if any.
    package var reportedFailure: (code: String, message: String)?
    /// Saved state (kept in memory until the store lands).
    package var savedState: [UInt8]?
    /// A task executor's: where its task frames go (see ``ModuleTaskRunner``).
    package var taskFrames: ((FrameKind, UnsafeRawBufferPointer) throws -> Void)?
    /// A task executor's: called when its worker is gone, with how it ended.
    package var onWorkerExit: ((String) -> Void)?
    /// A task executor runs a module's task handler rather than a configured process: it is
    /// started on demand and never restarted (see ``ModuleTaskRunner``).
    package var isTaskExecutor: Bool { planned.kind == "task" }

    package var eventsEmitted = 0
    package var eventsDelivered = 0
    package var eventsDropped = 0
    /// Lines a `jsonl/1` module's program wrote that its worker refused (not frames).
    package var linesRefused = 0
    /// Producers paused because this process's queue is full (`when_full: block`).
    package var pausedProducers: [SupervisedProcess] = []
    /// How many full subscribers hold this producer paused.
    package var pauseCount = 0
    /// How many times it was paused (shown in `status`), and how many of those were logged.
    package var timesPaused = 0
    package var timesPausedLogged = 0
    package var pauseLoggedAt = 0.0
    package var lastHeartbeat = 0.0

    /// Cache of the targets of the last event type this process emitted.
    package let lastEmittedType = FrameBuffer()
    package var lastEmittedTypeName = ""
    package var lastTargets: [SupervisedProcess] = []
    /// Replica groups among the targets: each event goes to one replica of each.
    package var lastGroups: [ReplicaGroup] = []
    /// The only target, if there is exactly one (kept alive by `lastTargets`).
    package var singleTarget: Unmanaged<SupervisedProcess>?
    /// Tasks triggered by the type it emitted last (nil: none; then `singleTarget` is nil too,
    /// so that every event of the type goes through `route`).
    package var lastTriggers: [TaskTrigger]?
    /// Whether the type it emitted last is published to the fleet (then `singleTarget` is nil).
    package var lastPublished = false
    /// The type it emitted last holds control characters: its events are refused.
    package var lastTypeRefused = false
    /// Events refused for their type, and when that was last logged.
    package var eventsRefused = 0
    package var refusalLoggedAt = 0.0
    package var routingGeneration = -1

    package init(_ planned: PlannedProcess) {
        self.planned = planned
        nameBytes = FrameBuffer()
        nameBytes.append(contentsOf: planned.name.utf8)
        queueLimit = planned.policy.queueLimit
        self.isChatbot = planned.kind == "chatbot"
    }

    package var hasWorker: Bool { pid > 0 }

    /// Bytes of deliveries queued but not yet written.
    package var pendingBytes: Int { outgoing.count - sent }

    /// Whether anything is waiting to be written.
    package var hasUnsent: Bool { outgoing.count > sent || control.count > controlSent }

    /// What is left to write of a delivery frame partly written (a control frame may not
    /// go in the middle of it).
    package var partialFrameRemainder: Int {
        guard sent > sentBoundary else { return 0 }
        return outgoing.withUnsafeBytes { sentBoundary + 4 + Int(FrameCodec.readUInt32($0, at: sentBoundary)) - sent }
    }

    /// Records that `count` control bytes were written.
    package func noteControlSent(_ count: Int) {
        controlSent += count
        if controlSent == control.count {
            control.removeAll(keepingCapacity: true)
            controlSent = 0
            wakeUnsent = false
        }
    }

    /// Drops what the dead worker already received (and the frame it was in the middle of) and
    /// keeps the deliveries it never saw, for its successor. Returns how many events were lost.
    package func discardSentFrames() -> Int {
        control.removeAll(keepingCapacity: false)
        controlSent = 0
        wakeUnsent = false
        inFlight = 0
        let partial = partialFrameRemainder
        let lost = partial > 0 ? outgoing.withUnsafeBytes { EventFrame.deliveryEvents($0, at: sentBoundary) } : 0
        outgoing.removeFirst(sent + partial)
        sent = 0
        sentBoundary = 0
        return lost
    }

    /// Drops undelivered events, oldest first, until at least `bytes` are freed (never the
    /// frame being written). Returns how many were dropped.
    package func dropOldestDeliveries(freeing bytes: Int) -> Int {
        // The first frame not yet started on the wire.
        let start = sent + partialFrameRemainder
        var end = start
        var dropped = 0
        outgoing.withUnsafeBytes { raw in
            while end - start < bytes, raw.count - end >= 4 {
                let next = end + 4 + Int(FrameCodec.readUInt32(raw, at: end))
                guard next <= raw.count else { break }
                dropped += EventFrame.deliveryEvents(raw, at: end)
                end = next
            }
        }
        if end > start { outgoing.removeSubrange(start..<end) }
        return dropped
    }

    /// Records that `count` more bytes were written to the worker's socket.
    package func noteSent(_ count: Int) {
        inFlight += count
        noteWritten(count)
    }

    /// Records that `count` bytes (whole frames) were copied into the worker's ring.
    package func noteCopiedToRing(_ count: Int) {
        // Whole frames: the boundary is where they end, no need to look for it.
        sentBoundary = sent + count
        noteWritten(count)
    }

    /// The frame boundary behind what was written is found while it is fresh in the cache,
    /// each frame once; the written prefix is removed once it is large and at least as large
    /// as what is left, so that each byte is moved at most once (a backlog of several MB
    /// behind a slow subscriber was moved again after every MB written).
    private func noteWritten(_ count: Int) {
        sent += count
        if sent == outgoing.count {
            // A burst's memory is kept for the next one, up to a bound.
            outgoing.removeAll(keepingCapacity: outgoing.capacity <= 4 << 20)
            sent = 0
            sentBoundary = 0
            return
        }
        outgoing.withUnsafeBytes { raw in
            while raw.count - sentBoundary >= 4 {
                let end = sentBoundary + 4 + Int(FrameCodec.readUInt32(raw, at: sentBoundary))
                if end > sent { break }
                sentBoundary = end
            }
        }
        guard sentBoundary > 1 << 20, sentBoundary >= outgoing.count - sentBoundary else { return }
        outgoing.removeFirst(sentBoundary)
        sent -= sentBoundary
        sentBoundary = 0
    }

    /// Puts delivery frames before every delivery queued (nothing of them may be sent yet).
    package func queueFirst(deliveries frames: [UInt8]) {
        precondition(sent == 0, "deliveries put first while some were sent")
        outgoing.prepend(frames)
    }

    /// Puts a frame before everything queued (the start frame of a new worker).
    package func queueFirst(_ frame: [UInt8]) {
        // Whatever an earlier worker was sent of its control frames is gone with it.
        if controlSent > 0 {
            control.removeFirst(controlSent)
            controlSent = 0
        }
        control.prepend(frame)
    }
}

/// One of a worker's output pipes (stdout or stderr), read on the supervisor's loop line by
/// line.
package struct WorkerOutput {
    package let stream: ProcessLog.Stream
    package var fd: Int32 = -1
    /// The line being read: its first 64 KiB (what the console shows), and its full length.
    package var line: [UInt8] = []
    package var length = 0

    package init(stream: ProcessLog.Stream) { self.stream = stream }
}
