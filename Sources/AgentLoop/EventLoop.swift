import AgentCore
import CAgentSystem
import Foundation

/// A single-threaded epoll loop with timers. The supervisor runs everything on it: worker
/// sockets, worker output, pidfds (death is noticed at once), signals and restart timers.
///
/// It is ``LoopActor``'s, with its handlers and timers: whoever registers one hands the loop
/// work that runs isolated to it, so what they touch is held to the actor by the compiler.
/// Nonisolated: what makes a thread the loop's (``runOnce(maxWait:)``, ``isolated(_:)``), the
/// inbox, the clock.
@LoopActor
package final class EventLoop {
    package typealias Handler = @LoopActor (UInt32) -> Void
    package typealias Timer = @LoopActor () -> Void

    private let epollFD: Int32
    private var handlers: [Int32: Handler]
    private var timers = TimerQueue<Timer>()
    private var nextTimerID = 1
    private var events = [epoll_event](repeating: epoll_event(), count: 256)

    /// Work posted from other threads.
    package nonisolated let inbox: LoopInbox
    /// The longest any turn's handlers and timers have run, in seconds, and how many turns ran
    /// ``slowTurn`` or longer: for that long the loop answered nothing else (what `status`
    /// reports as `loop`, and the chaos test prints).
    package private(set) var longestTurn: Double = 0
    package private(set) var slowTurns = 0
    /// When the turn running now began (nil between turns: the loop's thread setting up, a
    /// test driving it by hand).
    private var turnBegan: Double?

    /// Whether the turn running now has taken `seconds` already: work that can wait (a queue's
    /// next starts) goes on at the next turn, so that one turn does not hold everything else.
    /// False between turns.
    package func turnHasTaken(_ seconds: Double) -> Bool {
        guard let turnBegan else { return false }
        return Self.now() - turnBegan >= seconds
    }
    package nonisolated static let slowTurn = 0.010

    /// Any thread (a test makes its loop before it drives it).
    package nonisolated init() {
        let epollFD = epoll_create1(Int32(EPOLL_CLOEXEC))
        precondition(epollFD >= 0, "epoll_create1 failed: \(String(cString: strerror(errno)))")
        let inbox = LoopInbox()
        var event = epoll_event()
        event.events = Self.readable
        event.data.fd = inbox.fd
        precondition(epoll_ctl(epollFD, EPOLL_CTL_ADD, inbox.fd, &event) == 0, "epoll_ctl failed for the inbox: \(String(cString: strerror(errno)))")
        self.epollFD = epollFD
        self.inbox = inbox
        handlers = [inbox.fd: { _ in inbox.drain() }]
    }

    deinit { close(epollFD) }

    package nonisolated static let readable = UInt32(EPOLLIN.rawValue) | UInt32(EPOLLRDHUP.rawValue)
    package nonisolated static let writable = UInt32(EPOLLOUT.rawValue)
    /// Reported once per change rather than while it holds: an eventfd registered so is never
    /// read (each write to it is reported once).
    package nonisolated static let edgeTriggered = UInt32(EPOLLET.rawValue)
    /// Reported whatever the interest: the other end is gone, or the fd failed.
    package nonisolated static let hangup = UInt32(EPOLLHUP.rawValue) | UInt32(EPOLLERR.rawValue)
    /// The other end shut its writing down (a socket's half close), asked for with ``readable``.
    package nonisolated static let peerClosed = UInt32(EPOLLRDHUP.rawValue)

    /// Monotonic time in seconds.
    package nonisolated static func now() -> Double {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
    }

    package func register(_ fd: Int32, events: UInt32 = EventLoop.readable, handler: @escaping Handler) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        if epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event) == 0 {
            handlers[fd] = handler
        }
    }

    package func modify(_ fd: Int32, events: UInt32) {
        var event = epoll_event()
        event.events = events
        event.data.fd = fd
        _ = epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
    }

    package func unregister(_ fd: Int32) {
        guard handlers.removeValue(forKey: fd) != nil else { return }
        _ = epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, nil)
    }

    package func isRegistered(_ fd: Int32) -> Bool { handlers[fd] != nil }

    /// Runs `action` on the loop after `seconds`. The span is clamped (``Saturating/seconds(_:)``:
    /// NaN and negative are now, at most 100 years), so no value from settings can overflow a
    /// deadline or the wait for it.
    @discardableResult
    package func schedule(after seconds: Double, _ action: @escaping Timer) -> Int {
        let id = nextTimerID
        nextTimerID += 1
        timers.insert(id: id, deadline: Self.now() + Saturating.seconds(seconds), action: action)
        return id
    }

    /// Cancels timer `id` (set and not run yet; nothing otherwise). One already taken as due in
    /// the turn running now still runs, as before.
    package func cancel(_ id: Int) { timers.cancel(id) }

    /// Waits for at most `maxWait` seconds (nil: until something happens), then runs the
    /// handlers of ready fds and of due timers.
    package nonisolated func runOnce(maxWait: Double? = nil) {
        // This thread is the loop's while it runs the loop's handlers (``LoopExecutor``). The
        // supervisor enters for its whole run: then a turn costs one thread-local read.
        let entering = !LoopExecutor.isCurrent(inbox)
        let outer = entering ? LoopExecutor.enter(inbox) : nil
        defer { if entering { LoopExecutor.restore(outer) } }
        // Not isolated itself: this is what makes the thread the loop's, for a caller that is
        // not on it yet (a test driving a loop by hand). The turn then is, entered once per
        // turn, not per event: the hot path stays synchronous.
        LoopActor.assumeIsolated { turn(maxWait: maxWait) }
    }

    private func turn(maxWait: Double?) {
        var timeout = maxWait.map { Saturating.pollTimeout(min($0, 3600)) } ?? -1
        if let soonest = timers.soonest() {
            // At most Int32.max ms (24.8 days): a later timer is looked at again then.
            let untilTimer = Saturating.pollTimeout(soonest - Self.now())
            timeout = timeout < 0 ? untilTimer : min(timeout, untilTimer)
        }
        let count = events.withUnsafeMutableBufferPointer { epoll_wait(epollFD, $0.baseAddress, Int32($0.count), timeout) }
        let began = Self.now()
        turnBegan = began
        defer {
            turnBegan = nil
            measureTurn(since: began)
        }
        if count > 0 {
            for i in 0..<Int(count) {
                let fd = events[i].data.fd
                // A handler may have unregistered a later fd of this batch.
                handlers[fd]?(events[i].events)
            }
        }
        if !timers.isEmpty {
            // Those due now, taken before any runs: a timer one of them sets waits for the next turn.
            for timer in timers.popDue(Self.now()) { timer.action() }
        }
    }

    /// Makes this thread the loop's thread until ``leaveThread(_:)`` (whatever runs between two
    /// turns, like the supervisor's `afterLoopTurn`, is then on the loop for ``LoopActor``).
    /// Returns what to give back to ``leaveThread(_:)`` (nested drives restore the outer loop).
    package nonisolated func enterThread() -> UnsafeMutableRawPointer? { LoopExecutor.enter(inbox) }

    package nonisolated func leaveThread(_ outer: UnsafeMutableRawPointer?) { LoopExecutor.restore(outer) }

    /// Runs `body` isolated to the loop, synchronously on this thread, which is the loop's for
    /// the call: for the thread that owns the loop when it works outside a turn (the supervisor
    /// building and wiring its parts before ``runOnce(maxWait:)``; tests driving a loop by hand).
    /// Never while another thread runs this loop.
    @discardableResult
    package nonisolated func isolated<T>(_ body: @LoopActor () throws -> T) rethrows -> T {
        try inbox.isolated(body)
    }

    /// Makes this the loop that runs ``LoopActor`` jobs enqueued from threads that drive no
    /// loop (see ``LoopExecutor``), until ``resignHome()``. The supervisor's loop does, for its run.
    package nonisolated func becomeHome() { LoopExecutor.becomeHome(inbox) }

    package nonisolated func resignHome() { LoopExecutor.resignHome(inbox) }

    private func measureTurn(since began: Double) {
        let spent = Self.now() - began
        if spent > longestTurn { longestTurn = spent }
        if spent >= Self.slowTurn { slowTurns += 1 }
    }
}
