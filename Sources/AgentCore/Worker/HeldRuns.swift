import CAgentSystem
import Foundation
import Synchronization

/// Task runs that came before their not-before instant (a schedule's fires, sent ahead), held
/// by the worker and handed over at that instant: the supervisor's loop and the pipe are then
/// off the path between the instant and the run's start.
///
/// A thread of their own waits on CLOCK_REALTIME with an absolute deadline, so a step of the
/// wall clock moves the release with it, with a timer slack of 1 µs rather than the default
/// 50 µs, until a last stretch before the instant: 200 µs, or more when wake-ups come later
/// than that (a virtual CPU halted while idle wakes hundreds of µs late) — the latest wake-up
/// lateness of the last instants plus a margin, at most 500 µs of CPU per instant (a later
/// wake-up is the machine's load, which a longer spin makes worse).
///
/// In that stretch the instant's runs are taken and the clock is watched. Runs the module
/// prepared (`task_prepare`: their Tasks already made, their inputs decoded) are handed over
/// from the cooperative pool, the one their Tasks resume on: two of its threads (one on a
/// single core) watch the clock, one starts the runs and the other takes them, where a run
/// handed over from here waited for a sleeping pool thread's wake-up (~100 µs). Runs still to
/// be made Tasks (`task_run`) are handed over by this thread, while the pool's threads take the
/// Tasks as they come.
// @unchecked: its state is guarded by a raw pthread mutex and condition (CLOCK_REALTIME
// deadlines with a 1 µs timer slack, which neither NSCondition nor Mutex gives).
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
        /// Made ready by the module's `task_prepare` when it came (started by `task_start`).
        var prepared = false
    }

    private let mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    private let condition = UnsafeMutablePointer<pthread_cond_t>.allocate(capacity: 1)
    /// By not-before, then arrival. Guarded by `mutex`.
    private var runs: [Run] = []
    private var threadStarted = false
    private let release: @Sendable ([Run]) -> Void
    private let pool: @Sendable (@escaping @Sendable () -> Void) -> Void
    /// Keeps the worker's frames while an instant's runs start (nil: frames go as they come).
    private let completionHold: CompletionHold?
    /// The least time before an instant the thread stops waiting and watches the clock (ns).
    static let minimumSpin: Int64 = 200_000
    /// The most (ns): past it a late wake-up is the machine's load, not worth a CPU.
    static let maximumSpin: Int64 = 500_000
    /// How long before an instant the thread stops waiting now (ns); holder thread only.
    private(set) var spin = HeldRuns.minimumSpin
    /// The latest wake-up lateness seen, decaying by a quarter per instant (ns).
    private var recentLateness: Int64 = 0
    /// How many pool threads watch the clock for an instant: two where there are two cores, so
    /// that the runs started by one are taken by the other without waking it (a wake-up of a
    /// halted virtual CPU held the thread starting them for ~90 µs at a time).
    static let poolSpinners = min(2, max(1, ProcessInfo.processInfo.activeProcessorCount))
    /// How long after an instant this thread waits for the pool to hand its runs over (ns).
    static let defaultPoolGrace: Int64 = 1_000_000
    /// This holder's wait for the pool (ns): ``defaultPoolGrace`` but in tests, which make the
    /// pool's path certain on a loaded machine with a longer one.
    let poolGrace: Int64

    /// `release` is called with the runs of each instant as it comes, in order (on the holder's
    /// thread or a pool thread, never two at once);
    /// `hold` keeps the worker's frames from the last stretch before an instant until its runs
    /// completed or ``CompletionHold/window`` after their hand-over passed.
    /// `pool` runs a job on the cooperative pool (tests put a slow pool in its place), and
    /// `poolGrace` is how long past an instant the holder waits for it.
    init(hold: CompletionHold? = nil, pool: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void = HeldRuns.onPool,
         poolGrace: Int64 = HeldRuns.defaultPoolGrace, release: @escaping @Sendable ([Run]) -> Void) {
        self.completionHold = hold
        self.pool = pool
        self.poolGrace = poolGrace
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
            WorkerThread.start("held-runs") { [self] in wait() }
        }
    }

    /// Takes back the held run `token` (cancelled before its instant); nil when it is not
    /// held (never was, or already handed over).
    func remove(token: UInt64) -> Run? {
        locked {
            guard let index = runs.firstIndex(where: { $0.token == token }) else { return nil }
            return runs.remove(at: index)
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
            let nowNanoseconds = TaskExecutor.realtimeNanoseconds()
            if first.notBefore - nowNanoseconds > spin {
                let wake = first.notBefore - spin
                var deadline = timespec(tv_sec: Int(wake / 1_000_000_000), tv_nsec: Int(wake % 1_000_000_000))
                if pthread_cond_timedwait(condition, mutex, &deadline) == ETIMEDOUT {
                    noteWakeUp(late: TaskExecutor.realtimeNanoseconds() - wake)
                }
                continue
            }
            // Within the spin of the instant (or past it): the runs due by then are taken now,
            // before it comes, and read once, so that the instant finds them in the cache (taken
            // and read at the instant, they cost tens of µs of cache misses).
            let instant = first.notBefore
            let taken = takeRuns(dueBy: instant)
            let nextInstant = runs.first?.notBefore
            pthread_mutex_unlock(mutex)
            // One run alone gains nothing from holding its result back.
            let holding = taken.count > 1 ? completionHold : nil
            holding?.begin(taken.map(\.token))
            let batch = HeldBatch(runs: taken, instant: instant)
            if instant <= nowNanoseconds {
                release(taken)
            } else if taken.allSatisfy(\.prepared) {
                releaseFromPool(batch)
            } else {
                // Each run is still to be made a Task: this thread does that, while the pool's
                // threads take the Tasks as they come.
                batch.touch()
                while TaskExecutor.realtimeNanoseconds() < instant {}
                release(taken)
            }
            // Not past the next instant's last stretch.
            holding?.end(by: min(TaskExecutor.realtimeNanoseconds() &+ CompletionHold.window, (nextInstant ?? .max) &- spin))
            pthread_mutex_lock(mutex)
        }
    }

    /// The held runs whose not-before is at or before `instant`, in order (`mutex` held). As a
    /// rule that is all of them, taken whole.
    private func takeRuns(dueBy instant: Int64) -> [Run] {
        let due = runs.prefix { $0.notBefore <= instant }.count
        var taken: [Run] = []
        if due == runs.count {
            swap(&taken, &runs)
        } else {
            taken = Array(runs[..<due])
            runs.removeFirst(due)
        }
        return taken
    }

    /// A wake-up `late` ns after its deadline: the spin covers the latest of the last instants.
    func noteWakeUp(late: Int64) {
        recentLateness = max(late, recentLateness - recentLateness / 4)
        spin = min(max(recentLateness + 100_000, Self.minimumSpin), Self.maximumSpin)
    }

    /// Hands `batch` over from a Task on the cooperative pool, the one the module's runs start
    /// on: a pool thread that watches the clock until the instant and then starts the runs is
    /// already awake to run the first of them and has them in its cache, where a run handed
    /// over by this thread waited for a sleeping pool thread's wake-up (about 100 µs on a
    /// virtual CPU). Should no pool thread be free by the instant plus ``poolGrace`` (the pool
    /// busy with long runs), this thread hands them over itself; whichever comes first does.
    private func releaseFromPool(_ batch: HeldBatch) {
        // Each watches the clock; the first at the instant hands the runs over, the other goes
        // back to the pool and takes the runs' Tasks.
        for _ in 0..<Self.poolSpinners {
            pool { [self] in
                batch.touch()
                // A step of the wall clock back while this spins must not hold a pool thread
                // for as long as the step: past the stretch it was given (on the monotonic
                // clock) it gives up, and the holder, whose wait follows the wall clock, hands
                // the runs over at their instant.
                let giveUp = TaskExecutor.nanoseconds(CLOCK_MONOTONIC) &+ (batch.instant &- TaskExecutor.realtimeNanoseconds()) &+ Self.maximumSpin
                while TaskExecutor.realtimeNanoseconds() < batch.instant {
                    if TaskExecutor.nanoseconds(CLOCK_MONOTONIC) > giveUp { return }
                }
                if batch.claim() {
                    release(batch.runs)
                    batch.finished()
                }
            }
        }
        if !batch.waitUntilFinished(by: batch.instant &+ poolGrace) {
            // Never before the instant as the wall clock reads now (it may have stepped back).
            while TaskExecutor.realtimeNanoseconds() < batch.instant, !batch.waitUntilFinished(by: batch.instant) {}
            if batch.claim() {
                release(batch.runs)
            } else {
                // The pool's thread is handing them over now.
                batch.waitUntilFinished()
            }
        }
    }

    /// A job on the cooperative pool, where the module's Tasks run.
    static func onPool(_ job: @escaping @Sendable () -> Void) {
        Task.detached { job() }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
