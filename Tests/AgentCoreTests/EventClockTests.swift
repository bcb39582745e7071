import AgentTestSupport
import CAgentSystem
import Foundation
import Testing

/// The stamp a worker puts on every emitted event (`agent_event_time_ns`).
@Suite(.ownThreads) struct EventClockTests {
    /// Runs `body` on a new thread (the clock's calibration is per thread) and returns its result.
    private func onNewThread<T: Sendable>(_ body: @escaping @Sendable () -> T) -> T {
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var result: T?
        let thread = Thread {
            result = body()
            done.signal()
        }
        thread.start()
        done.wait()
        return result!
    }

    private static func realtime() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1_000_000_000 + Int64(ts.tv_nsec)
    }

    private static var kernelKeepsTimeWithTheTSC: Bool {
        #if arch(x86_64)
        let name = try? String(contentsOfFile: "/sys/devices/system/clocksource/clocksource0/current_clocksource", encoding: .utf8)
        return name?.trimmingCharacters(in: .whitespacesAndNewlines) == "tsc"
        #else
        return false
        #endif
    }

    @Test func stampsStayWithinMicrosecondsOfTheRealtimeClockAndNeverGoBack() {
        struct Run: Sendable {
            var stamps = 0
            var outside: [(before: Int64, stamp: Int64, after: Int64)] = []
            var backwards = 0
            var clockReads: UInt64 = 0
        }
        let run = onNewThread { () -> Run in
            var run = Run()
            var previous = Int64.min
            // Past the first rate window (10 ms) and the first re-measurement (1 s).
            let end = Self.realtime() + 1_200_000_000
            while true {
                let before = Self.realtime()
                let stamp = agent_event_time_ns()
                let after = Self.realtime()
                run.stamps += 1
                // 5 µs of slack: an extrapolation is off by well under 1 µs.
                if stamp < before - 5_000 || stamp > after + 5_000, run.outside.count < 5 {
                    run.outside.append((before, stamp, after))
                }
                if stamp < previous { run.backwards += 1 }
                previous = stamp
                if after > end { break }
            }
            run.clockReads = agent_event_clock_reads()
            return run
        }
        #expect(run.stamps > 1000)
        #expect(run.outside.isEmpty, "stamps outside the clock reads around them: \(run.outside)")
        #expect(run.backwards == 0)
        if Self.kernelKeepsTimeWithTheTSC {
            // The clock is read for the first 10 ms, then about once a millisecond.
            #expect(run.clockReads < UInt64(run.stamps) / 4, "\(run.clockReads) clock reads for \(run.stamps) stamps")
        } else {
            #expect(run.clockReads == UInt64(run.stamps))
        }
    }
}
