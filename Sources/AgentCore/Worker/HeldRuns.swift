import CAgentSystem
import Foundation

/// Task runs that came before their not-before instant (a schedule's fires, sent ahead), held
/// by the worker and handed over by a thread of their own at that instant: the supervisor's
/// loop and the pipe are then off the path between the instant and the run's start.
///
/// The thread waits on CLOCK_REALTIME with an absolute deadline, so a step of the wall clock
/// moves the release with it, with a timer slack of 1 µs rather than the default 50 µs, until
/// ``spin`` before the instant, and reads the clock from then on (200 µs of CPU per instant).
final class HeldRuns: @unchecked Sendable {
    /// A run's frame, copied out of the reader's buffer.
    struct Run {
        var token: UInt64
        var attempt: UInt32
        /// Nanoseconds since the epoch, CLOCK_REALTIME.
        var notBefore: Int64
        var runID: [UInt8]
        var idempotencyKey: [UInt8]
        var input: [UInt8]
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// By not-before, then arrival. Guarded by `mutex`.
    private var runs: [Run] = []
    private var threadStarted = false
    private let release: @Sendable ([Run]) -> Void
    /// How long before an instant the thread stops waiting and watches the clock (ns).
    static let spin: Int64 = 200_000

    /// `release` is called on the holder's thread with the runs whose instant came, in order.
    init(release: @escaping @Sendable ([Run]) -> Void) {
        self.release = release
        pthread_mutex_init(mutex, nil)
        // The default clock of a condition is CLOCK_REALTIME, which the deadlines are on.
        pthread_cond_init(condition, nil)
    }

    /// The runs held now (for tests and the worker's own accounting).
    var count: Int { locked { runs.count } }

    /// Holds `run` until its not-before.
    func hold(_ run: Run) {
        let startThread = locked { () -> Bool in
            let index = runs.lastIndex { $0.notBefore <= run.notBefore }.map { $0 + 1 } ?? 0
            runs.insert(run, at: index)
            pthread_cond_signal(condition)
            defer { threadStarted = true }
            return !threadStarted
        }
        if startThread {
            let thread = Thread { [self] in wait() }
            thread.name = "held-runs"
            thread.start()
        }
    }

    /// Takes back the held run `token` (cancelled before its instant); false when it is not
    /// held (never was, or already handed over).
    func remove(token: UInt64) -> Bool {
        locked {
            guard let index = runs.firstIndex(where: { $0.token == token }) else { return false }
            runs.remove(at: index)
            return true
        }
    }

    private func wait() {
        _ = agent_set_timer_slack(1)
        pthread_mutex_lock(mutex)
        while true {
            guard let first = runs.first else {
                pthread_cond_wait(condition, mutex)
                continue
            }
            var now = timespec()
            clock_gettime(CLOCK_REALTIME, &now)
            let nowNanoseconds = Int64(now.tv_sec) &* 1_000_000_000 &+ Int64(now.tv_nsec)
            if first.notBefore - nowNanoseconds > Self.spin {
                let wake = first.notBefore - Self.spin
                var deadline = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
                pthread_cond_timedwait(condition, mutex, &deadline)
                continue
            }
            if first.notBefore > nowNanoseconds {
                // The last stretch on the clock itself: a wake-up from a wait comes tens of
                // microseconds late, more on a busy machine.
                let instant = first.notBefore
                pthread_mutex_unlock(mutex)
                while TaskExecutor.realtimeNanoseconds() < instant {}
                pthread_mutex_lock(mutex)
                continue
            }
            let due = runs.prefix { $0.notBefore <= nowNanoseconds }.count
            let taken = Array(runs[..<due])
            runs.removeFirst(due)
            pthread_mutex_unlock(mutex)
            release(taken)
            pthread_mutex_lock(mutex)
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
