import CAgentSystem
import Foundation
import Synchronization

/// Task runs that came before their not-before instant (a schedule's fires, sent ahead), held
/// by the worker and handed over by a thread of their own at that instant: the supervisor's
/// loop and the pipe are then off the path between the instant and the run's start.
///
/// The thread waits on CLOCK_REALTIME with an absolute deadline, so a step of the wall clock
/// moves the release with it, with a timer slack of 1 µs rather than the default 50 µs, until
/// a spin before the instant, and reads the clock from then on. The spin is 200 µs, or more
/// when wake-ups come later than that (a virtual CPU halted while idle wakes hundreds of µs
/// late): the latest wake-up lateness of the last instants plus a margin, at most 500 µs of CPU
/// per instant (a later wake-up is the machine's load, which a longer spin makes worse: a
/// thread that spins loses the precedence a waking thread has over the busy ones).
///
/// A module's run starts as a Swift Task on the cooperative pool, whose idle threads sleep and
/// wake just as late; so while the holder spins, one pool thread spins too (a Task that ends
/// as soon as the first run is handed over) and takes the first runs without a wake-up.
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
    private let release: @Sendable (Run) -> Void
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
    /// The instant whose first run was handed over last (ns): the pool's spinning Task ends on it.
    private let handedOver = Atomic<Int64>(0)
    /// What ``touch(_:)`` read last; holder thread only.
    private var touched = 0

    /// `release` is called on the holder's thread with each run whose instant came, in order;
    /// `hold` keeps the worker's frames from the last stretch before an instant until its runs
    /// completed or ``CompletionHold/window`` after their hand-over passed.
    init(hold: CompletionHold? = nil, release: @escaping @Sendable (Run) -> Void) {
        self.completionHold = hold
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
            if instant > nowNanoseconds {
                keepPoolThreadAwake(until: instant)
                touched = Self.touch(taken)
                while TaskExecutor.realtimeNanoseconds() < instant {}
            }
            for (index, run) in taken.enumerated() {
                release(run)
                if index == 0 { handedOver.store(run.notBefore, ordering: .releasing) }
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

    /// Reads each run's bytes once (the sum is kept so that the reads are not left out).
    private static func touch(_ runs: [Run]) -> Int {
        var sum = 0
        for run in runs {
            sum &+= run.runID.count &+ Int(run.runID.first ?? 0) &+ Int(run.idempotencyKey.first ?? 0) &+ Int(run.input.first ?? 0)
        }
        return sum
    }

    /// A wake-up `late` ns after its deadline: the spin covers the latest of the last instants.
    func noteWakeUp(late: Int64) {
        recentLateness = max(late, recentLateness - recentLateness / 4)
        spin = min(max(recentLateness + 100_000, Self.minimumSpin), Self.maximumSpin)
    }

    /// A Task that spins on a pool thread until the first run of `instant` is handed over (a
    /// Task enqueued then runs at once instead of after a sleeping thread's wake-up), or until
    /// the longest spin has passed the instant, should the holder itself be held up.
    private func keepPoolThreadAwake(until instant: Int64) {
        let giveUp = instant &+ Self.maximumSpin
        Task.detached(priority: .high) { [self] in
            while handedOver.load(ordering: .acquiring) < instant, TaskExecutor.realtimeNanoseconds() < giveUp {}
        }
    }

    private func locked<T>(_ body: () -> T) -> T {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return body()
    }
}
