#if canImport(Glibc)
import Glibc
#endif

/// Clocks and pacing for the bench processes.
enum BenchClock {
    /// Wall-clock time in nanoseconds (the clock the host stamps events with).
    static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Blocks the calling thread until the monotonic clock reaches `deadline` (nanoseconds).
    /// Precise to the kernel's timer slack (about 50 µs), unlike a task sleep.
    static func sleep(untilMonotonic deadline: Int64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }
}
