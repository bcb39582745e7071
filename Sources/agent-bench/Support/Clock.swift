import Foundation

/// The clocks the bench reads.
enum Clock {
    /// Monotonic seconds.
    static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    static func monotonicNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Wall-clock nanoseconds: the clock workers stamp events with.
    static func realtimeNanoseconds() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    /// Blocks until the monotonic clock reaches `deadline` (nanoseconds).
    static func sleep(untilMonotonic deadline: Int64) {
        var ts = timespec(tv_sec: Int(deadline / 1_000_000_000), tv_nsec: Int(deadline % 1_000_000_000))
        while clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nil) == EINTR {}
    }

    /// Runs `body` and returns how long it took, in milliseconds.
    static func milliseconds(_ body: () throws -> Void) rethrows -> Double {
        let start = now()
        try body()
        return (now() - start) * 1000
    }
}
