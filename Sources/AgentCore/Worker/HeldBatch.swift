import Foundation
import Synchronization

/// The runs of one instant, taken from ``HeldRuns``'s queue in its last stretch before the
/// instant and handed over exactly once: by the pool thread that watched the clock for them,
/// or by the holder should that thread not come in time.
final class HeldBatch: Sendable {
    let runs: [HeldRuns.Run]
    /// Nanoseconds since the epoch, CLOCK_REALTIME.
    let instant: Int64
    private let claimed = Atomic<Bool>(false)
    /// Whether the claimer handed every run over.
    private let done = Guarded(false)

    init(runs: [HeldRuns.Run], instant: Int64) {
        self.runs = runs
        self.instant = instant
    }

    /// True for the one caller that hands the runs over.
    func claim() -> Bool {
        !claimed.exchange(true, ordering: .acquiringAndReleasing)
    }

    /// The claimer handed every run over.
    func finished() {
        done.withLock { $0 = true }
        done.signal()
    }

    /// Waits until ``finished()``, or until `deadline` (CLOCK_REALTIME ns) if there is one;
    /// true when finished.
    @discardableResult
    func waitUntilFinished(by deadline: Int64? = nil) -> Bool {
        let until = deadline.map { Date(timeIntervalSince1970: Double($0) / 1e9) } ?? .distantFuture
        return done.withLock(waitingUntil: { $0 ? nil : until }) { $0 }
    }

    /// Reads each run's bytes once, so that the instant finds them in the cache of the thread
    /// that hands them over (read at the instant, they cost tens of µs of cache misses).
    func touch() {
        var sum = 0
        for run in runs {
            sum &+= run.runID.count &+ Int(run.runID.first ?? 0) &+ Int(run.idempotencyKey.first ?? 0) &+ Int(run.input.first ?? 0)
        }
        touched.store(sum, ordering: .relaxed)
    }

    /// Keeps ``touch()``'s reads from being left out.
    private let touched = Atomic<Int>(0)
}
