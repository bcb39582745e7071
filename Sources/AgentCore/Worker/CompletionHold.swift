import Foundation
import Synchronization

/// Holds the worker's outgoing frames while the runs of one instant start (``HeldRuns``
/// hands them over together), and sends them in one write once those runs have all completed
/// or a short window has passed, whichever comes first.
///
/// Each frame written to the supervisor wakes it, and on a machine with two cores the
/// supervisor handling the first results of an instant takes a core from the runs of the same
/// instant still starting (figure 11's p99 was the last runs of a batch of 100, started after the
/// supervisor's wake-ups). Held, the batch's results reach the supervisor together a moment
/// later, in one write rather than a hundred; nothing else of the worker waits longer than the
/// window.
final class CompletionHold: Sendable {
    private let channel: WorkerChannel
    /// The runs of the batch not completed yet.
    private let outstanding = Guarded(Set<UInt64>())
    /// Whether a batch is on: completions outside one cost one atomic load.
    private let active = Atomic<Bool>(false)
    /// The longest the frames are held after the batch was handed over (ns).
    static let window: Int64 = 2_000_000

    init(channel: WorkerChannel) { self.channel = channel }

    /// The runs `tokens` are about to be handed over: frames wait from now on.
    func begin(_ tokens: [UInt64]) {
        outstanding.withLock { $0 = Set(tokens) }
        active.store(true, ordering: .releasing)
        channel.holdFrames()
    }

    /// The run `token` completed (its result frame already queued).
    func completed(_ token: UInt64) {
        guard active.load(ordering: .acquiring) else { return }
        if outstanding.withLock({ $0.remove(token) != nil && $0.isEmpty }) { outstanding.signal() }
    }

    /// Waits until the batch's runs have all completed or `deadline` (CLOCK_REALTIME ns) has
    /// come, then sends what was held.
    func end(by deadline: Int64) {
        let until = Date(timeIntervalSince1970: Double(deadline) / 1e9)
        outstanding.withLock(waitingUntil: { $0.isEmpty ? nil : until }) { $0.removeAll() }
        active.store(false, ordering: .releasing)
        channel.releaseFrames()
    }
}
