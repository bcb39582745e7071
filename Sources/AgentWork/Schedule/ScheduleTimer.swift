import AgentLoop
import CAgentSystem
import Foundation

/// The schedules' one timer: a timerfd on CLOCK_REALTIME, armed at an absolute wall-clock
/// instant with nanosecond precision (the loop's own timers are monotonic and in
/// milliseconds), with TFD_TIMER_CANCEL_ON_SET so that a step of the wall clock (NTP, `date
/// -s`) ends the wait with ECANCELED: the fire times are then recomputed. Registered in the
/// supervisor's loop; nothing polls.
@LoopActor
package final class ScheduleTimer {
    package let fd: Int32
    private let loop: EventLoop
    /// The instant armed (nil: disarmed).
    package private(set) var armedAt: Double?
    /// The wall clock and the monotonic clock when armed: how far the wall clock stepped.
    private var armedClocks: (wall: Double, monotonic: Double)?

    /// `expired`: the armed instant has come. `stepped`: the wall clock was set (by this many
    /// seconds forward; negative: back) while the timer was armed.
    package init?(loop: EventLoop, expired: @escaping () -> Void, stepped: @escaping (Double) -> Void) {
        fd = timerfd_create(CLOCK_REALTIME, Int32(TFD_NONBLOCK | TFD_CLOEXEC))
        guard fd >= 0 else { return nil }
        self.loop = loop
        loop.register(fd) { [weak self] _ in
            guard let self else { return }
            var count: UInt64 = 0
            let n = read(fd, &count, 8)
            if n < 0, errno == ECANCELED {
                let step = stepSinceArmed()
                armedAt = nil
                armedClocks = nil
                stepped(step)
            } else if n == 8 {
                armedAt = nil
                expired()
            }
        }
    }

    /// On the loop (where the scheduler lets it go; it waits for the loop when let go elsewhere):
    /// it takes its fd out of the loop's table before the fd's number can be used again.
    isolated deinit {
        loop.unregister(fd)
        close(fd)
    }

    /// Arms the timer for `instant` (seconds since the epoch, wall clock); nil disarms it.
    package func arm(at instant: Double?) {
        guard armedAt != instant else { return }
        var spec = itimerspec()
        if let instant {
            let clamped = min(max(instant, 0), 1e12)
            let seconds = clamped.rounded(.down)
            spec.it_value.tv_sec = Int(seconds)
            spec.it_value.tv_nsec = min(Int(((clamped - seconds) * 1e9).rounded(.up)), 999_999_999)
            // 0 disarms: the epoch itself is "as soon as possible".
            if spec.it_value.tv_sec == 0, spec.it_value.tv_nsec == 0 { spec.it_value.tv_nsec = 1 }
        }
        let flags = Int32(TFD_TIMER_ABSTIME) | Int32(TFD_TIMER_CANCEL_ON_SET)
        guard timerfd_settime(fd, flags, &spec, nil) == 0 else { return }
        armedAt = instant
        armedClocks = instant == nil ? nil : (Self.wallClock(), EventLoop.now())
    }

    /// How far the wall clock moved against the monotonic one since the timer was armed.
    private func stepSinceArmed() -> Double {
        guard let armedClocks else { return 0 }
        return (Self.wallClock() - armedClocks.wall) - (EventLoop.now() - armedClocks.monotonic)
    }

    nonisolated package static func wallClock() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }
}
